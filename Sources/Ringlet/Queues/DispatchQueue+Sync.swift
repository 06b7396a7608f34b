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
    ///
    /// Inlinable so that the generic part is specialised in the caller; the work is
    /// done by the non-generic `_syncCore`.
    @inlinable
    public func sync<T, E: Error>(execute work: () throws(E) -> T) throws(E) -> T {
        var outcome: Result<T, E>?
        _syncCore(barrier: false) {
            do throws(E) { outcome = .success(try work()) } catch { outcome = .failure(error) }
        }
        return try outcome.unsafelyUnwrapped.get()
    }

    /// `sync` with flags: `.barrier` makes the closure run alone on a concurrent queue;
    /// QoS flags behave as for `async`.
    @inlinable
    public func sync<T, E: Error>(flags: DispatchWorkItemFlags, execute work: () throws(E) -> T) throws(E) -> T {
        var outcome: Result<T, E>?
        _syncCore(barrier: flags.contains(.barrier)) {
            do throws(E) { outcome = .success(try work()) } catch { outcome = .failure(error) }
        }
        return try outcome.unsafelyUnwrapped.get()
    }

    /// Runs a work item on this queue and waits for it (honouring its `.barrier`).
    public func sync(execute workItem: DispatchWorkItem) {
        _syncCore(barrier: workItem.flags.contains(.barrier)) { workItem.perform() }
    }

    /// Runs `body` as an item of this queue on the calling thread when the queue and
    /// its target chain are free (the fast path, borrowing the thread's context
    /// without retaining it); otherwise queues it and waits.
    @usableFromInline
    func _syncCore(barrier: Bool, _ body: () -> Void) {
        let ranFast = ThreadContext.withCurrent { context in
            if isMain || context.currentQueueReference != nil {
                rejectSyncDeadlock(context: context, barrier: barrier)
            }
            guard !isMain, acquireChain(barrier: barrier) else { return false }
            runHolding(body, context: context)
            releaseChain(barrier: barrier)
            return true
        }
        if ranFast { return }
        let context = ThreadContext.current
        if syncSlow(barrier: barrier, priority: syncPriority(context), context: context, body) {
            // The drainer handed this queue's slot over: run here, as GCD does.
            runHolding(body, context: context)
            releaseChain(barrier: barrier)
        }
    }

    /// Runs a sync closure on the calling thread, which holds this queue's slot.
    /// Inside another queue's item, that queue stays held while this runs.
    private func runHolding(_ body: () -> Void, context: ThreadContext) {
        let outer = context.currentQueueReference
        if let outer { context.outerQueues.append(outer) }
        let priority = syncPriority(context)
        let saved = context.enter(Unmanaged.passUnretained(self), at: priority, crumb: context.submitCrumb)
        context.traceStarted(.syncBlock, Unmanaged.passUnretained(self), priority)
        body()
        context.traceFinished()
        context.restore(saved)
        if outer != nil { context.outerQueues.removeLast() }
    }

    /// `sync` runs at the caller's QoS, raised to the queue's when that is higher.
    private func syncPriority(_ context: ThreadContext) -> QoSPriority {
        max(context.currentPriority, resolvePriority(for: context.currentPriority, flags: [], itemQoS: .unspecified))
    }

    /// Queues the closure behind the queue's pending items and sleeps. Returns true
    /// when the drainer handed the queue over instead of running the closure (a
    /// serial queue straight on a global queue): the caller then runs it itself.
    private func syncSlow(barrier: Bool, priority: QoSPriority, context: ThreadContext, _ body: () -> Void) -> Bool {
        withoutActuallyEscaping(body) { escapable in
            var held = context.outerQueues
            if let current = context.currentQueueReference { held.append(current) }
            let waiter = SyncWaiter(callerHolds: held)
            let node = RuntimeParts.withPool {
                $0.allocate(kind: .syncWaiter, priority: priority, isBarrier: barrier, block: escapable,
                            object: waiter, context: context)
            }
            push(node)
            waiter.wait(on: self)
            return waiter.handedOver
        }
    }

    /// Takes a slot in this queue and in each queue up the target chain (below the
    /// root), or none at all and returns false. Root queues need no slot.
    private func acquireChain(barrier: Bool) -> Bool {
        if isRoot { return true }
        guard let next = acquireSlot(asBarrier: barrier) else { return false }
        // The common case, a queue straight on a global queue, touches no other
        // object (and so no reference count).
        guard case .some(let nextQueue) = next else { return true }
        var queue: DispatchQueue? = nextQueue
        while let current = queue {
            guard let following = current.acquireSlot(asBarrier: false) else {
                releaseChain(barrier: barrier, stoppingAt: current)
                return false
            }
            queue = following ?? nil
        }
        return true
    }

    /// Takes one slot in this queue for a synchronous caller. Returns nil when the
    /// queue is busy; `.some(nil)` when the target is a global queue (the chain ends);
    /// `.some(target)` otherwise.
    private func acquireSlot(asBarrier: Bool) -> DispatchQueue?? {
        // The main queue's work runs on the main thread only: a sync that needs it
        // (directly or through a target) always waits for the main thread.
        if isMain { return nil }
        lock.lock()
        // Nodes still in the inbox were pushed before this call (by this thread, too):
        // the closure must not overtake them.
        guard inbox.isEmpty, state.takeSyncSlot(asBarrier: asBarrier) else {
            lock.unlock()
            return nil
        }
        let next: DispatchQueue? = state.targetIsRoot ? nil : state.target
        lock.unlock()
        return .some(next)
    }

    /// Gives back the slots `acquireChain` took, from this queue up to (not
    /// including) `stop`, waking each queue that has runnable items.
    private func releaseChain(barrier: Bool, stoppingAt stop: DispatchQueue? = nil) {
        if isRoot { return }
        var next = releaseSlot(wasBarrier: barrier)
        while let current = next, current !== stop {
            next = current.releaseSlot(wasBarrier: false)
        }
    }

    /// Gives back one slot; returns the target when it is not a global queue.
    private func releaseSlot(wasBarrier: Bool) -> DispatchQueue? {
        lock.lock()
        state.giveSyncSlot(wasBarrier: wasBarrier)
        let next: DispatchQueue? = state.targetIsRoot ? nil : state.target
        let action = wakeupIfNeededLocked()
        lock.unlock()
        if case .none = action { return next }
        perform(action)
        return next
    }

    /// Traps when the calling thread holds this queue, or a serial queue this one
    /// needs, exclusively — a `sync` that can never return.
    private func rejectSyncDeadlock(context: ThreadContext, barrier: Bool) {
        if isMain && context.isMainThread {
            ringletMisuse("DispatchQueue.main.sync called on the main thread: this deadlocks, because only the "
                + "main thread runs the main queue. Call the closure directly, or use async.")
        }
        context.forEachHeldQueue { holding in
            var needed: DispatchQueue? = self
            var first = true
            while let queue = needed, !queue.isRoot {
                // A thread holds a concurrent queue exclusively when it runs one of its
                // barriers (nothing else runs then).
                if queue === holding
                    && (queue.isSerial || (first && barrier) || queue.lock.withLock { queue.state.barrierRunning }) {
                    ringletMisuse("sync onto queue '\(label)' from code already running on queue "
                        + "'\(holding.label)', which it needs exclusively: this would deadlock. Use async, "
                        + "or call the closure directly.")
                }
                first = false
                needed = queue.currentTarget
            }
            return true
        }
    }
}

/// The caller of a contended `sync`, sleeping until a drainer has run its closure.
// @unchecked Sendable: `finished`/`handedOverSlot` under `done`; `callerHolds` is immutable.
final class SyncWaiter: @unchecked Sendable {
    /// The queues the waiting caller holds: while the drainer runs the closure for
    /// it, the drainer's thread counts as holding them too, so dispatchPrecondition
    /// and the sync deadlock check see what they would on the caller's thread.
    let callerHolds: [Unmanaged<DispatchQueue>]
    private let event = FutexEvent()

    init(callerHolds: [Unmanaged<DispatchQueue>]) {
        self.callerHolds = callerHolds
    }
    private let done = FutexLock()
    private var finished = false
    private var handedOverSlot = false

    deinit { event.deallocate(); done.deallocate() }

    /// The drainer ran the closure (`handedOver` false), or gave the caller the
    /// queue's slot to run it on its own thread (true).
    func signal(handedOver: Bool = false) {
        done.withLock {
            finished = true
            handedOverSlot = handedOver
        }
        event.post()
    }

    var handedOver: Bool { done.withLock { handedOverSlot } }

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
