import Synchronization

/// `sync`: runs a closure as an item of the queue and returns its result.
///
/// Fast path: when the queue (and every queue up its target chain) could take the
/// closure right now, the caller takes the slots itself and runs it on its own
/// thread, at its own QoS or higher. Otherwise the caller takes the chain's slots one
/// queue at a time (libdispatch's `_dispatch_sync_recurse`): where a queue is busy,
/// it leaves a `.syncWaiter` node in that queue's FIFO and sleeps — a Ringlet wait
/// that raises the queue to the caller's QoS — holding the slots it already has.
/// The sleep ends one of two ways:
/// - **handed over**: whoever frees the slot while the waiter is at the head of the
///   serial queue's FIFO (a `sync` caller giving its slot back, a drain that stops
///   or reaches the node, a `resume`) gives the slot to the waiter instead of waking
///   the queue with a token (`DispatchQueue.syncWaiterToHandOverLocked`). The
///   waiter goes on up the chain and runs its closure on its own thread, as GCD
///   does: chains of `sync` make progress without any pool thread.
/// - **run for it**: a drainer that holds the queue's target too (a nested drain, a
///   concurrent queue's drain, the main thread) runs the closure on its own thread,
///   as an item of the queue `sync` was called on.
/// The main queue always takes the second way, so its work runs on the main thread.
extension DispatchQueue {
    /// Runs `work` on this queue and waits for it; returns its value or rethrows its
    /// error. Traps when the caller already runs on this serial queue (or on a serial
    /// queue this one targets): that would deadlock.
    ///
    /// Emitted into the caller, so that the generic part is specialised there (and
    /// Ringlet's Embedded object holds no unspecialized trap for it); the work is done
    /// by the non-generic `_syncCore`.
    @_alwaysEmitIntoClient
    public func sync<T, E: Error>(execute work: () throws(E) -> T) throws(E) -> T {
        var outcome: Result<T, E>?
        _syncCore(barrier: false) {
            do throws(E) { outcome = .success(try work()) } catch { outcome = .failure(error) }
        }
        return try outcome.unsafelyUnwrapped.get()
    }

    /// `sync` with flags: `.barrier` makes the closure run alone on a concurrent queue;
    /// QoS flags behave as for `async`.
    @_alwaysEmitIntoClient
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
            // Code of a queue runs only with that queue current (NodeRunner enters it
            // before the item and leaves after what the item released), so a thread
            // without a current queue holds none; only the main queue needs a look then.
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
        if context.isMainThread { rejectMainThreadWaitForMain() }
        if syncSlow(barrier: barrier, priority: syncPriority(context), context: context, body) {
            // Every slot of the chain was taken or handed over: run here, as GCD does.
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

    /// Takes the chain's slots one queue at a time, sleeping at each busy one until its
    /// slot is handed over or a drainer has run the closure. Returns true when the
    /// caller holds every slot (it then runs the closure itself), false when a drainer
    /// ran it (the slots taken before are given back here).
    private func syncSlow(barrier: Bool, priority: QoSPriority, context: ThreadContext, _ body: () -> Void) -> Bool {
        withoutActuallyEscaping(body) { escapable in
            var held = context.outerQueues
            if let current = context.currentQueueReference { held.append(current) }
            let waiter = SyncWaiter(callerHolds: held, runsOn: Unmanaged.passUnretained(self))
            // Slots from `self` up to (not including) `next` are this caller's.
            var next = self
            while true {
                let isFirst = next === self
                if let acquired = next.acquireSlot(asBarrier: isFirst && barrier) {
                    guard case .some(let target) = acquired else { return true }
                    next = target
                    continue
                }
                let node = RuntimeParts.withPool {
                    $0.allocate(kind: .syncWaiter, priority: priority, isBarrier: isFirst && barrier,
                                block: escapable, object: waiter, context: context)
                }
                let noted = SyncWaitCycles.shared.begin(at: next, onto: self,
                                                        holds: heldSerialQueues(held, below: next), context: context)
                // Whoever ends the wait removes the note before it wakes this thread: a
                // note left until then would show a wait that has ended (SyncWaitCycles).
                waiter.cycleNote.store(noted, ordering: .releasing)
                next.push(node)
                let handedOver = waiter.wait(on: next)
                SyncWaitCycles.shared.ended(noted)
                guard handedOver else {
                    // A drainer ran the closure as an item of this queue.
                    if !isFirst { releaseChain(barrier: barrier, stoppingAt: next) }
                    return false
                }
                guard let target = next.targetBelowRoot else { return true }
                next = target
            }
        }
    }
    /// The serial queues a `sync` caller about to wait at `waitAt` holds: those of
    /// the items on its stack (`held`) and their targets, and the slots it took from
    /// this queue up to `waitAt` (SyncWaitCycles).
    private func heldSerialQueues(_ held: [Unmanaged<DispatchQueue>],
                                  below waitAt: DispatchQueue) -> [Unmanaged<DispatchQueue>] {
        var holds: [Unmanaged<DispatchQueue>] = []
        var taken: DispatchQueue? = self
        while let queue = taken, queue !== waitAt {
            if queue.isSerial { holds.append(Unmanaged.passUnretained(queue)) }
            taken = queue.currentTarget
        }
        for start in held {
            var queue: DispatchQueue? = start.takeUnretainedValue()
            while let holding = queue, !holding.isRoot {
                if holding.isSerial { holds.append(Unmanaged.passUnretained(holding)) }
                queue = holding.currentTarget
            }
        }
        return holds
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

    /// The target when it is not a global queue (a chain's next queue). Takes the lock.
    private var targetBelowRoot: DispatchQueue? {
        lock.withLock { state.targetIsRoot ? nil : state.target }
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

    /// Traps on the main thread when this queue leads to the main queue: its work
    /// runs on the main thread only, which would wait for itself. (Inside an item of
    /// the main queue, the held-queue check catches it; this is the main thread
    /// outside `dispatchMain()`.) Only on the slow path: a queue leading to the main
    /// queue never takes the fast one.
    private func rejectMainThreadWaitForMain() {
        var queue: DispatchQueue? = currentTarget
        while let current = queue {
            if current.isMain {
                ringletMisuse("sync onto queue '\(label)', which targets the main queue, called on the main thread: "
                    + "this deadlocks, because only the main thread runs the main queue's work (and '\(label)''s "
                    + "with it). Call the closure directly, use async, or give '\(label)' another target.")
            }
            queue = current.currentTarget
        }
    }

    /// Traps when the calling thread holds this queue, or a serial queue this one
    /// needs, exclusively — however it came to hold it (an item, a nested `sync`, a
    /// deinit its release ran): a `sync` that only this thread could end.
    private func rejectSyncDeadlock(context: ThreadContext, barrier: Bool) {
        if isMain && context.isMainThread {
            ringletMisuse("DispatchQueue.main.sync called on the main thread: this deadlocks, because only the "
                + "main thread runs the main queue. Call the closure directly, or use async.")
        }
        if let holding = context.exclusivelyHeldQueue(onChainOf: self, asBarrier: barrier) {
            let through = holding === self ? "" : " (it runs on '\(holding.label)')"
            ringletMisuse("self-wait: sync onto queue '\(label)'\(through) from \(context.threadDescription), which "
                + "already holds queue '\(holding.label)' and would wait for itself forever: this would deadlock. "
                + "Use async, or call the closure directly when already on the queue (DispatchQueue.getSpecific "
                + "tells).")
        }
    }
}

/// The caller of a contended `sync`, sleeping until a queue's slot is handed over to
/// it or a drainer has run its closure. Used for each wait of one `sync` call (a
/// chain may need several).
// @unchecked Sendable: `finished`/`handedOverSlot` under `done`; the rest is immutable.
final class SyncWaiter: @unchecked Sendable {
    /// The queues the waiting caller holds: while the drainer runs the closure for
    /// it, the drainer's thread counts as holding them too, so dispatchPrecondition
    /// and the sync deadlock check see what they would on the caller's thread.
    let callerHolds: [Unmanaged<DispatchQueue>]
    /// The queue `sync` was called on, which a drainer runs the closure as an item of
    /// (the caller keeps it alive). Its slot, and those up to the queue the node waits
    /// in, are the caller's already.
    let runsOn: Unmanaged<DispatchQueue>
    private let event = FutexEvent()
    /// The caller's note of its current wait in SyncWaitCycles (0: none), removed by
    /// whoever ends the wait, before the caller wakes.
    let cycleNote = Atomic<UInt64>(0)

    init(callerHolds: [Unmanaged<DispatchQueue>], runsOn: Unmanaged<DispatchQueue>) {
        self.callerHolds = callerHolds
        self.runsOn = runsOn
    }
    private let done = FutexLock()
    private var finished = false
    private var handedOverSlot = false

    deinit { event.deallocate(); done.deallocate() }

    /// A drainer ran the closure (`handedOver` false), or the queue's slot was given to
    /// the caller, to go on up the chain and run the closure itself (true).
    func signal(handedOver: Bool = false) {
        let note = cycleNote.exchange(0, ordering: .acquiringAndReleasing)
        if note != 0 { SyncWaitCycles.shared.ended(note) }
        done.withLock {
            finished = true
            handedOverSlot = handedOver
        }
        event.post()
    }

    /// Sleeps until signalled, raising `queue` to the caller's QoS first; returns
    /// whether the slot was handed over. Ready for the next wait when it returns.
    func wait(on queue: DispatchQueue) -> Bool {
        queue.raise(to: ThreadContext.current.currentPriority)
        BlockingWait.perform(.sync(runsOn.takeUnretainedValue(), at: queue)) {
            while true {
                let seen = event.snapshot
                if done.withLock({ finished }) { return }
                _ = BlockingWait.sleep(on: event, seen: seen, timeoutNanoseconds: -1)
            }
        }
        return done.withLock {
            finished = false
            return handedOverSlot
        }
    }
}
