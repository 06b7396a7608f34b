import Synchronization

/// Pushing nodes onto a queue and waking it up in its target: the side effects of
/// the state machine in QueueState.swift (whose transitions decide; these act, after
/// the lock is dropped). All `...Locked` functions run with `lock` held.
extension DispatchQueue {
    /// What to do once the lock is dropped.
    enum WakeAction {
        case none
        /// Push a token at this priority into the target; `embedded` uses the queue's
        /// own token node, else one is tried from the pool.
        case pushToken(QoSPriority, embedded: Bool)
        /// The token in a non-root target must run sooner: raise the target.
        case raiseTarget(QoSPriority)
    }

    /// Work of this queue waits (for the stall report). Takes the lock.
    var hasPendingWork: Bool { lock.withLock { !state.fifo.isEmpty || !inbox.isEmpty } }
    /// Pending nodes. Takes in the inbox first (any lock holder may: the wake-up for
    /// what it moves is still decided by the chain's first producer or the drainer).
    var pendingCount: Int {
        lock.withLock {
            takeInboxLocked()
            return state.fifo.count
        }
    }

    // MARK: Push

    /// Hands a node to this queue: to the scheduler for a root queue, to the main
    /// thread for the main queue, else into the FIFO (waking the queue if needed).
    func push(_ node: WorkNodeRef) {
        if case .root(let level) = kind {
            node.pointee.submittedRoot = UInt8(level.rawValue + 1)
            RuntimeParts.withScheduler { $0.enqueue(node) }
            return
        }
        if case .joined = inbox.push(node) {
            // Taken later by the chain's first producer or by the active drainer, who
            // also resolve the wake-up and any raise. A drainer running now hears at
            // once that something more urgent came (as a locked push would tell it).
            let raw = node.pointee.priority.rawValue
            if inbox.hasActiveDrainer, raw > overrideSignal.load(ordering: .relaxed) {
                overrideSignal.store(raw, ordering: .relaxed)
            }
            return
        }
        lock.lock()
        takeInboxLocked()
        let action = wakeupOrRaiseLocked()
        lock.unlock()
        perform(action)
    }

    /// Moves the nodes waiting in the inbox into the FIFO, in push order; records the
    /// most urgent of them for `wakeupOrRaiseLocked`. Returns whether any moved.
    @discardableResult
    func takeInboxLocked() -> Bool {
        var highest = QoSPriority.lowest
        let moved = inbox.takeAll { node in
            if node.pointee.priority > highest { highest = node.pointee.priority }
            state.append(node)
        }
        guard moved else { return false }
        if highest > state.inboxPriority { state.inboxPriority = highest }
        pushCount.store(pushCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        return true
    }

    /// After nodes came in from the inbox: a token to the target if the queue needs
    /// one, else the raise the most urgent of them calls for (a locked push's rule).
    func wakeupOrRaiseLocked() -> WakeAction {
        let arrived = state.inboxPriority
        state.inboxPriority = .lowest
        let action = wakeupIfNeededLocked()
        if case .none = action, arrived > .lowest { return raiseLocked(arrived) }
        return action
    }

    /// Decides whether a new token must go to the target. For concurrent queues,
    /// several tokens may be out so that several workers drain in parallel.
    @inline(__always)
    func wakeupIfNeededLocked() -> WakeAction {
        state.wakeup(parallelism: RuntimeParts.shared.poolThreads)
    }

    /// A node of `priority` arrived while the queue is already woken or draining:
    /// resolve the inversion (GCD's push override); a drainer running now hears of
    /// it through `overrideSignal`.
    func raiseLocked(_ priority: QoSPriority) -> WakeAction {
        if state.running > 0, priority.rawValue > overrideSignal.load(ordering: .relaxed) {
            overrideSignal.store(priority.rawValue, ordering: .relaxed)
        }
        return state.raise(priority)
    }

    /// Raises this queue because something it (indirectly) holds became urgent.
    func raise(to priority: QoSPriority) {
        if isRoot || isMain { return }
        lock.lock()
        // Pending items may be in the FIFO or in the batch a drainer holds: either
        // way the queue's next wake-up must come at `priority`.
        if priority > state.pendingMaxPriority, !state.fifo.isEmpty || state.running > 0 || !inbox.isEmpty {
            state.pendingMaxPriority = priority
        }
        let action = raiseLocked(priority)
        lock.unlock()
        perform(action)
    }

    func perform(_ action: WakeAction) {
        switch action {
        case .none:
            return
        case .pushToken(let priority, let embedded):
            pushToken(priority, embedded: embedded)
        case .raiseTarget(let priority):
            currentTarget?.raise(to: priority)
        }
    }

    /// The token taken from the target was the embedded one: it may be used again.
    func releaseEmbeddedToken() {
        embeddedToken.deinitialize(count: 1)
        lock.withLock { state.embeddedTokenInUse = false }
    }

    private func pushToken(_ priority: QoSPriority, embedded: Bool) {
        if isMain {
            MainThread.shared.tokenPosted()
            return
        }
        guard let target = currentTarget else { ringletBug("queue '\(label)' has no target") }
        let node: WorkNodeRef
        if embedded {
            embeddedToken.initialize(to: WorkNode(next: nil, kind: .queueToken, isBarrier: false, priority: priority,
                                                  block: nil, object: self))
            node = embeddedToken
        } else if let pooled = RuntimeParts.withPool({
            $0.tryAllocate(kind: .queueToken, priority: priority, object: self)
        }) {
            node = pooled
        } else {
            // An extra token (parallelism or a raise) while the pool is full: the
            // outstanding embedded token still wakes the queue.
            lock.withLock { state.tokensOutstanding -= 1 }
            return
        }
        target.push(node)
    }
}
