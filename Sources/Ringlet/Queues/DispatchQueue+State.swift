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
        /// Give the queue's slot to the `sync` caller waiting in this node, which was
        /// the FIFO's head (`syncWaiterToHandOverLocked`).
        case handOver(WorkNodeRef)
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
        let action = pushDeferringWake(node)
        if case .none = action { return }
        perform(action)
    }

    /// `push` up to the wake-up it calls for, which is returned, not done: `perform`
    /// pushes a queue's token into its target so, then the target's token into its
    /// own, in one frame however long the target chain.
    @inline(__always)
    private func pushDeferringWake(_ node: WorkNodeRef) -> WakeAction {
        if case .root(let level) = kind {
            node.pointee.submittedRoot = UInt8(level.rawValue + 1)
            RuntimeParts.withScheduler { $0.enqueue(node) }
            return .none
        }
        if case .joined = inbox.push(node) {
            // Taken later by the chain's first producer or by the coming drain, who
            // also resolve the wake-up and any raise. A drainer running now hears at
            // once that something more urgent came (as a locked push would tell it).
            let priority = node.pointee.priority
            let coming = inbox.coming
            if let tokenPriority = coming.tokenPriority {
                // A token waiting at a lower priority is raised now, as a locked push
                // would, not when its drain starts: that may be late, at the lower
                // priority. Nothing to tell a drainer: none runs yet.
                if priority > tokenPriority { return takeInboxAndDecide() }
            } else if coming.any, priority.rawValue > overrideSignal.load(ordering: .relaxed) {
                overrideSignal.store(priority.rawValue, ordering: .relaxed)
            }
            return .none
        }
        return takeInboxAndDecide()
    }

    /// Takes the inbox into the FIFO and returns the wake-up or raise the queue needs.
    private func takeInboxAndDecide() -> WakeAction {
        lock.lock()
        takeInboxLocked()
        let action = wakeupOrRaiseLocked()
        lock.unlock()
        return action
    }

    /// Moves the nodes waiting in the inbox into the FIFO, in push order, at most
    /// `limit` of them (the rest stay in the inbox, for a drainer's later take); records
    /// the most urgent of them for `wakeupOrRaiseLocked`. Returns whether any moved.
    @discardableResult
    func takeInboxLocked(upTo limit: Int = .max) -> Bool {
        var highest = QoSPriority.lowest
        var behindOthers = !state.fifo.isEmpty
        // The inbox's chain is already linked in push order: the FIFO takes it whole,
        // and the walk only reads each node (no store into lines the producer's core
        // may still hold).
        guard let chain = inbox.takeAll(upTo: limit, { node in
            let priority = node.pointee.priority
            if priority > highest { highest = priority }
            state.noteArrival(node, priority: priority, behindOthers: behindOthers)
            behindOthers = true
        }) else { return false }
        state.fifo.append(chain: chain.first, last: chain.last, count: chain.count)
        if highest > state.inboxPriority { state.inboxPriority = highest }
        pushCount.store(pushCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        return true
    }

    /// After nodes came in from the inbox: a token to the target if the queue needs
    /// one, else the raise the most urgent of them calls for (a locked push's rule).
    func wakeupOrRaiseLocked() -> WakeAction {
        let arrived = state.inboxPriority
        state.inboxPriority = .lowest
        var action = wakeupIfNeededLocked()
        if case .none = action, arrived > .lowest { action = raiseLocked(arrived) }
        // A serial queue's token is out (now or from before) and no drain runs: the
        // drain it starts takes the inbox, so producers need not take this lock until
        // then (QueueInbox, "coming consumer"). Only for a token in a global queue's run
        // queue, which a worker takes without any other queue's help.
        if isSerial && state.targetIsRoot && !isMain && state.tokensOutstanding > 0 && state.running == 0 {
            // Nodes whose producers may have left their raise to a first producer that
            // then saw the mark (QueueInbox.tokenIsOut): take them in and raise here.
            if inbox.tokenIsOut(at: state.tokenPriority), inbox.hasNodesAfterTokenMark(), takeInboxLocked() {
                action = raiseForLateArrivalsLocked(action)
            }
        }
        return action
    }

    /// The nodes just taken in after the token mark are more urgent than the token
    /// out: the token about to be pushed goes at their priority, or the one out is
    /// raised (an extra token, as `raiseLocked` decides).
    private func raiseForLateArrivalsLocked(_ action: WakeAction) -> WakeAction {
        let arrived = state.inboxPriority
        state.inboxPriority = .lowest
        guard arrived > state.tokenPriority else { return action }
        var decided = action
        switch action {
        case .pushToken(_, let embedded):
            state.tokenPriority = arrived
            decided = .pushToken(arrived, embedded: embedded)
        case .none:
            decided = raiseLocked(arrived)
        case .raiseTarget, .handOver:
            break
        }
        inbox.tokenIsOut(at: state.tokenPriority)
        return decided
    }

    /// Decides whether a new token must go to the target. For concurrent queues,
    /// several tokens may be out so that several workers drain in parallel.
    @inline(__always)
    func wakeupIfNeededLocked() -> WakeAction {
        if let waiter = syncWaiterToHandOverLocked() { return .handOver(waiter) }
        return state.wakeup(parallelism: RuntimeParts.shared.poolThreads)
    }

    /// (8) A serial queue that could start its head now, whose head is a `sync`
    /// caller: the slot goes to that caller (it runs the closure on its own thread)
    /// instead of a token that would need a pool thread to come and hand it over.
    /// Removes the node and takes the slot on the caller's behalf. Not the main queue,
    /// whose work runs on the main thread only. The common case — no caller at the
    /// head — costs a load of `running`, of the head and of its kind.
    @inline(__always)
    private func syncWaiterToHandOverLocked() -> WorkNodeRef? {
        guard state.running == 0, let head = state.fifo.head, head.pointee.kind == .syncWaiter else { return nil }
        return takeSyncWaiterLocked(head)
    }

    @inline(never)
    private func takeSyncWaiterLocked(_ head: WorkNodeRef) -> WorkNodeRef? {
        guard isSerial, !isMain, state.canTakeHead else { return nil }
        _ = state.fifo.removeFirst()
        state.lowerPriorityIfPassed(head)
        state.running = 1
        return head
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
        perform(raiseDeferringWake(to: priority))
    }

    /// `raise(to:)` up to the wake-up it calls for, which is returned, not done.
    private func raiseDeferringWake(to priority: QoSPriority) -> WakeAction {
        if isRoot || isMain { return .none }
        lock.lock()
        // Pending items may be in the FIFO or in the batch a drainer holds: either
        // way the queue's next wake-up must come at `priority`.
        if priority > state.pendingMaxPriority, !state.fifo.isEmpty || state.running > 0 || !inbox.isEmpty {
            state.pendingMaxPriority = priority
        }
        let action = raiseLocked(priority)
        lock.unlock()
        return action
    }

    /// Does what a state transition decided, once the lock is dropped. A token pushed
    /// into the target, or a raise of it, may call for the target's own token or raise
    /// in turn: the loop follows the chain up to where nothing more is needed, in
    /// constant stack (a chain of 10,000 queues is as cheap to wake as it is long).
    func perform(_ first: WakeAction) {
        var queue = self
        var action = first
        while true {
            switch action {
            case .none:
                return
            case .pushToken(let priority, let embedded):
                if queue.isMain {
                    MainThread.shared.tokenPosted()
                    return
                }
                guard let target = queue.currentTarget else { ringletBug("queue '\(queue.label)' has no target") }
                guard let node = queue.tokenNode(priority, embedded: embedded) else {
                    action = queue.tokenNotPushed()
                    continue
                }
                action = target.pushDeferringWake(node)
                queue = target
            case .raiseTarget(let priority):
                guard let target = queue.currentTarget else { return }
                action = target.raiseDeferringWake(to: priority)
                queue = target
            case .handOver(let node):
                ThreadContext.withCurrent { NodeRunner.handOver(node, context: $0) }
                return
            }
        }
    }

    /// The token taken from the target was the embedded one: it may be used again.
    func releaseEmbeddedToken() {
        embeddedToken.deinitialize(count: 1)
        lock.withLock { state.embeddedTokenInUse = false }
    }

    /// The node of a token to push into the target: the queue's own (`embedded`) or
    /// one from the pool; nil when the pool has none (`tokenNotPushed`).
    private func tokenNode(_ priority: QoSPriority, embedded: Bool) -> WorkNodeRef? {
        if embedded {
            embeddedToken.initialize(to: WorkNode(next: nil, kind: .queueToken, isBarrier: false, priority: priority,
                                                  block: nil, object: self))
            return embeddedToken
        }
        guard PooledTokenHook.allows(self) else { return nil }
        return RuntimeParts.withPool { $0.tryAllocate(kind: .queueToken, priority: priority, object: self) }
    }

    /// An extra token (parallelism or a raise) found the pool full and was not pushed.
    /// While another token is out, that one still wakes the queue. But that one may
    /// already have drained, and its drain's end saw this token counted: it left the
    /// queue's items for it and marked it coming (`QueueInbox.tokenIsOut`), so producers
    /// would leave their nodes for a drain that never starts. With no token left, the
    /// mark goes and the queue is woken with its embedded token, which is free then.
    /// Returns the wake-up that calls for.
    private func tokenNotPushed() -> WakeAction {
        lock.lock()
        state.tokenTaken()
        guard state.tokensOutstanding == 0 else {
            lock.unlock()
            return .none
        }
        inbox.noTokenOut()
        takeInboxLocked()
        let action = wakeupOrRaiseLocked()
        lock.unlock()
        return action
    }
}

/// Tests only: asked before a token that needs a pool node is allocated; false makes
/// it go as if the pool were full. Release builds always allow.
enum PooledTokenHook {
    #if DEBUG
    static let hook = TestHook<DispatchQueue, Bool>()
    #endif

    @inline(__always)
    static func allows(_ queue: DispatchQueue) -> Bool {
        #if DEBUG
        return hook.call(queue) ?? true
        #else
        return true
        #endif
    }
}
