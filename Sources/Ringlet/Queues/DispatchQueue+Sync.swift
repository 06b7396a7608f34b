/// `sync`: runs a closure as an item of the queue and returns its result.
///
/// Fast path: when the queue (and every queue up its target chain) could take the
/// closure right now, the caller takes the slots itself and runs it on its own
/// thread, at its own QoS or higher. Otherwise the closure is queued in FIFO order
/// as a `.syncWaiter` node and the caller sleeps — a Ringlet wait that raises the
/// queue to the caller's QoS — until a drainer has run it. The main queue always
/// takes the slow path so its work runs on the main thread.
extension DispatchQueue {
    /// Runs `work` on this queue and waits for it; returns its value or rethrows its
    /// error. Traps when the caller already runs on this serial queue (or on a serial
    /// queue this one targets): that would deadlock.
    public func sync<T, E: Error>(execute work: () throws(E) -> T) throws(E) -> T {
        try syncBody(barrier: false, work)
    }

    /// `sync` with flags: `.barrier` makes the closure run alone on a concurrent queue;
    /// QoS flags behave as for `async`.
    public func sync<T, E: Error>(flags: DispatchWorkItemFlags, execute work: () throws(E) -> T) throws(E) -> T {
        try syncBody(barrier: flags.contains(.barrier), work)
    }

    /// Runs a work item on this queue and waits for it (honouring its `.barrier`).
    public func sync(execute workItem: DispatchWorkItem) {
        syncBody(barrier: workItem.flags.contains(.barrier)) { workItem.perform() }
    }

    func syncBody<T, E: Error>(barrier: Bool, _ work: () throws(E) -> T) throws(E) -> T {
        let context = ThreadContext.current
        rejectSyncDeadlock(context: context, barrier: barrier)
        let priority = max(context.currentPriority, resolvePriority(for: context.currentPriority,
                                                                      flags: [], itemQoS: .unspecified))
        if !isMain, acquireChain(barrier: barrier) {
            defer { releaseChain(barrier: barrier) }
            return try context.running(on: self, at: priority) { () throws(E) -> T in try work() }
        }
        return try syncSlow(barrier: barrier, priority: priority, context: context, work)
    }

    private func syncSlow<T, E: Error>(barrier: Bool, priority: QoSPriority, context: ThreadContext,
                                       _ work: () throws(E) -> T) throws(E) -> T {
        var result: Result<T, E>?
        withoutActuallyEscaping(work) { escapable in
            let waiter = SyncWaiter()
            let block: () -> Void = {
                do throws(E) { result = .success(try escapable()) } catch { result = .failure(error) }
            }
            let node = Runtime.shared.pool.allocate(kind: .syncWaiter, priority: priority, isBarrier: barrier,
                                                    block: block, object: waiter)
            push(node)
            waiter.wait(on: self)
        }
        return try result.unsafelyUnwrapped.get()
    }

    /// Takes a slot in this queue and in each queue up the target chain (below the
    /// root), or none at all and returns false. Root queues need no slot.
    private func acquireChain(barrier: Bool) -> Bool {
        var queue: DispatchQueue? = self
        var asBarrier = barrier
        while let current = queue, !current.isRoot {
            current.lock.lock()
            let free = !current.isSuspendedLocked && !current.barrierRunning
                && (current.isSerial || asBarrier ? current.running == 0 && current.fifo.isEmpty
                    : current.running < current.width && current.barriersPending == 0)
            if !free {
                current.lock.unlock()
                releaseChain(barrier: barrier, stoppingAt: current)
                return false
            }
            current.running += 1
            if asBarrier && !current.isSerial { current.barrierRunning = true }
            let next = current.target
            current.lock.unlock()
            queue = next
            asBarrier = false
        }
        return true
    }

    /// Gives back the slots `acquireChain` took, from this queue up to (not
    /// including) `stop`, waking each queue that has runnable items.
    private func releaseChain(barrier: Bool, stoppingAt stop: DispatchQueue? = nil) {
        var queue: DispatchQueue? = self
        var first = true
        while let current = queue, !current.isRoot, current !== stop {
            current.lock.lock()
            current.running -= 1
            if first && barrier && !current.isSerial { current.barrierRunning = false }
            let next = current.target
            let action = current.wakeupIfNeededLocked()
            current.lock.unlock()
            current.perform(action)
            queue = next
            first = false
        }
    }

    /// Traps when the calling thread holds this queue, or a serial queue this one
    /// needs, exclusively — a `sync` that can never return.
    private func rejectSyncDeadlock(context: ThreadContext, barrier: Bool) {
        if isMain && context.isMainThread {
            ringletMisuse("DispatchQueue.main.sync called on the main thread: this deadlocks, because only the "
                + "main thread runs the main queue. Call the closure directly, or use async.")
        }
        var held = context.currentQueue
        while let holding = held {
            var needed: DispatchQueue? = self
            var first = true
            while let queue = needed, !queue.isRoot {
                if queue === holding && (queue.isSerial || (first && barrier)) {
                    ringletMisuse("sync onto queue '\(label)' from code already running on queue "
                        + "'\(holding.label)', which it needs exclusively: this would deadlock. Use async, "
                        + "or call the closure directly.")
                }
                first = false
                needed = queue.lock.withLock { queue.target }
            }
            held = holding.lock.withLock { holding.target }
        }
    }
}

/// The caller of a contended `sync`, sleeping until a drainer has run its closure.
final class SyncWaiter: @unchecked Sendable {
    private let event = FutexEvent()
    private let done = FutexLock()
    private var finished = false

    deinit { event.deallocate(); done.deallocate() }

    func signal() {
        done.withLock { finished = true }
        event.post()
    }

    /// Sleeps until signalled, raising `queue` to the caller's QoS first.
    func wait(on queue: DispatchQueue) {
        queue.raise(to: ThreadContext.current.currentPriority)
        BlockingWait.perform(.sync(queue)) {
            while true {
                let seen = event.snapshot
                if done.withLock({ finished }) { return }
                _ = BlockingWait.sleep(on: event, seen: seen, timeoutNanoseconds: -1)
            }
        }
    }
}
