import Synchronization
/// The queue state machine: pushing nodes, waking the queue up in its target, and
/// draining it. All `...Locked` functions run with `lock` held.
///
/// A non-root queue with runnable items has a wake-up token (a `.queueToken` node)
/// in its target: the root run queue of the most urgent pending priority, or the
/// FIFO of a non-root target. The worker that takes the token drains a batch of the
/// queue in place, nested inside the target's drain when the target is not a root.
///
///   idle --(1) push--> woken (token in target) --(2) token taken--> draining
///   draining --(3) batch done, items left--> woken
///   draining --(4) empty, suspended or barrier waits--> idle
///   woken --(5) more urgent push--> woken, with an extra token at that priority
///
///   (1),(3),(4) wakeupIfNeededLocked   (2) drain(token:from:topLevel:)   (5) raiseLocked
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

    var isSuspendedLocked: Bool { suspendCount > 0 || isInactive }

    /// Whether a drainer may take the head of the FIFO now.
    var canTakeHeadLocked: Bool {
        // `running` first: while a drainer runs a serial queue this answers without
        // touching the head node, which the drainer's core owns.
        if running >= width { return false }
        guard !isSuspendedLocked, let head = fifo.head, !barrierRunning else { return false }
        if head.pointee.isBarrier { return running == 0 }
        return true
    }

    /// Work of this queue waits (for the deadlock report). Takes the lock.
    var hasPendingWork: Bool { lock.withLock { !fifo.isEmpty } }
    var pendingCount: Int { lock.withLock { fifo.count } }

    // MARK: Push

    /// Hands a node to this queue: to the scheduler for a root queue, to the main
    /// thread for the main queue, else into the FIFO (waking the queue if needed).
    func push(_ node: WorkNodeRef) {
        if case .root(let level) = kind {
            node.pointee.submittedRoot = UInt8(level.rawValue + 1)
            RuntimeParts.withScheduler { $0.enqueue(node) }
            return
        }
        let priority = node.pointee.priority
        lock.lock()
        let raises = !fifo.isEmpty && priority > pendingMaxPriority
        fifo.append(node)
        pushCount.store(pushCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        if node.pointee.isBarrier { barriersPending += 1 }
        if priority > pendingMaxPriority { pendingMaxPriority = priority }
        if raises { overrideMarker = node }
        var action = wakeupIfNeededLocked()
        if case .none = action { action = raiseLocked(priority) }
        lock.unlock()
        perform(action)
    }

    /// Decides whether a new token must go to the target. For concurrent queues,
    /// several tokens may be out so that several workers drain in parallel.
    func wakeupIfNeededLocked() -> WakeAction {
        guard canTakeHeadLocked else { return .none }
        let limit = isSerial ? 1 : min(width, RuntimeParts.shared.poolThreads)
        guard tokensOutstanding + running < limit, tokensOutstanding < fifo.count else { return .none }
        return newTokenLocked(pendingMaxPriority)
    }

    /// A node of `priority` arrived while the queue is already woken or draining:
    /// resolve the inversion (GCD's push override).
    func raiseLocked(_ priority: QoSPriority) -> WakeAction {
        if running > 0, priority.rawValue > overrideSignal.load(ordering: .relaxed) {
            overrideSignal.store(priority.rawValue, ordering: .relaxed)
        }
        guard tokensOutstanding > 0, priority > tokenPriority, !isSuspendedLocked else { return .none }
        tokenPriority = priority
        if target?.isRoot ?? false {
            // The waiting token sits in a less urgent run queue: add one where it
            // belongs; whichever is taken second finds nothing and is dropped.
            return newTokenLocked(priority)
        }
        return .raiseTarget(priority)
    }

    /// Raises this queue because something it (indirectly) holds became urgent.
    func raise(to priority: QoSPriority) {
        if isRoot || isMain { return }
        lock.lock()
        // Pending items may be in the FIFO or in the batch a drainer holds: either
        // way the queue's next wake-up must come at `priority`.
        if priority > pendingMaxPriority, !fifo.isEmpty || running > 0 { pendingMaxPriority = priority }
        let action = raiseLocked(priority)
        lock.unlock()
        perform(action)
    }

    /// Called when the drainer takes `node`: once the node that raised the queue has
    /// been reached, the queue drains at the priority of what is left (GCD: the
    /// override lasts until the item has run). Scans at most 128 nodes; a longer
    /// FIFO keeps the raised priority until it empties.
    func lowerPriorityIfPassedLocked(_ node: WorkNodeRef) {
        if fifo.isEmpty {
            pendingMaxPriority = .lowest
            overrideMarker = nil
            return
        }
        guard node == overrideMarker else { return }
        overrideMarker = nil
        var highest = QoSPriority.lowest
        var scanned = 0
        var cursor = fifo.head
        while let current = cursor {
            if scanned == 128 { return }
            if current.pointee.priority > highest { highest = current.pointee.priority }
            cursor = current.pointee.next
            scanned += 1
        }
        pendingMaxPriority = highest
    }

    func perform(_ action: WakeAction) {
        switch action {
        case .none:
            return
        case .pushToken(let priority, let embedded):
            pushToken(priority, embedded: embedded)
        case .raiseTarget(let priority):
            lock.withLock { target }?.raise(to: priority)
        }
    }

    /// Counts a new token and picks its node. The queue's embedded token node is used
    /// whenever it is free — always so when no token is outstanding — so waking a
    /// queue never waits for the pool, even when the pool is full of its items.
    func newTokenLocked(_ priority: QoSPriority) -> WakeAction {
        tokensOutstanding += 1
        if priority > tokenPriority { tokenPriority = priority }
        let embedded = !embeddedTokenInUse
        if embedded { embeddedTokenInUse = true }
        return .pushToken(priority, embedded: embedded)
    }

    /// The token taken from the target was the embedded one: it may be used again.
    func releaseEmbeddedToken() {
        embeddedToken.deinitialize(count: 1)
        lock.withLock { embeddedTokenInUse = false }
    }

    private func pushToken(_ priority: QoSPriority, embedded: Bool) {
        if isMain {
            MainThread.shared.tokenPosted()
            return
        }
        guard let target = lock.withLock({ target }) else { ringletBug("queue '\(label)' has no target") }
        let node: WorkNodeRef
        if embedded {
            embeddedToken.initialize(to: WorkNode(next: nil, kind: .queueToken, isBarrier: false, priority: priority,
                                                  block: nil, object: self, group: nil))
            node = embeddedToken
        } else if let pooled = RuntimeParts.withPool({
            $0.tryAllocate(kind: .queueToken, priority: priority, object: self)
        }) {
            node = pooled
        } else {
            // An extra token (parallelism or a raise) while the pool is full: the
            // outstanding embedded token still wakes the queue.
            lock.withLock { tokensOutstanding -= 1 }
            return
        }
        target.push(node)
    }
}
