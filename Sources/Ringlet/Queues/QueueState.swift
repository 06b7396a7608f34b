/// A queue's state machine: everything about a non-root queue that changes, kept in
/// one place under the queue's lock (`DispatchQueue.lock`). The queue's other
/// mutable words are atomics a drainer reads without the lock (`stopRequested`,
/// `overrideSignal`, `pushCount`, the QoS floor).
///
/// A queue with runnable items has a wake-up token (a `.queueToken` node) in its
/// target: the root run queue of the most urgent pending priority, or the FIFO of a
/// non-root target. The worker that takes the token drains a batch of the queue in
/// place, nested inside the target's drain when the target is not a root.
///
///   idle --(1) push--> woken (token in target) --(2) token taken--> draining
///   draining --(3) batch done, items left--> woken
///   draining --(4) empty, suspended or barrier waits--> idle
///   woken --(5) more urgent push--> woken, with an extra token at that priority
///   idle --(6) sync takes a slot--> held by the caller --(7) slot given back--> idle or woken
///   idle, held or draining --(8) slot free, a sync caller at the FIFO's head--> held by it
///
///   (1) append, then wakeup       (2) DispatchQueue.drain (tokenTaken)
///   (3),(4) wakeup after a batch  (5) raise
///   (6) takeSyncSlot              (7) giveSyncSlot, then wakeup
///   (8) DispatchQueue.syncWaiterToHandOverLocked, before wakeup (serial queues only)
struct QueueState {
    /// Items that may run at once: 1 for serial queues (and the main queue).
    let width: Int32
    /// Pending nodes, in order.
    var fifo = NodeFIFO()
    /// The queue this one runs on (nil for global queues and the main queue).
    var target: DispatchQueue? {
        didSet { targetIsRoot = target?.isRoot ?? false }
    }
    /// `target` is a global queue, kept with it so that hot paths need not touch
    /// the target object.
    private(set) var targetIsRoot: Bool
    /// Slots held: items running from this queue plus synchronous callers inside it.
/// (The counters are 32-bit: a queue's bytes count, `ringlet bench`'s memory row.)
    var running: Int32 = 0
    /// A barrier runs (concurrent queues): nothing else may.
    var barrierRunning = false
    /// Barriers waiting in `fifo`.
    var barriersPending: Int32 = 0
    /// Wake-up tokens of this queue waiting in its target.
    var tokensOutstanding: Int32 = 0
    /// The most urgent priority among the waiting tokens.
    var tokenPriority = QoSPriority.lowest
    /// The most urgent priority among pending items (an upper bound).
    var pendingMaxPriority = QoSPriority.lowest
    /// The most urgent node taken in from the inbox since the last wake-up decision
    /// (`DispatchQueue.wakeupOrRaiseLocked`).
    var inboxPriority = QoSPriority.lowest
    /// The node whose push raised `pendingMaxPriority` above the items before it.
    var overrideMarker: WorkNodeRef?
    /// Unbalanced `suspend()` calls.
    var suspendCount: Int32 = 0
    /// Created `.initiallyInactive` and not yet activated.
    var isInactive: Bool
    /// The queue's own token node is out (see `newToken`).
    var embeddedTokenInUse = false

    init(width: Int, target: DispatchQueue?, inactive: Bool) {
        self.width = Int32(width)
        self.target = target
        targetIsRoot = target?.isRoot ?? false
        isInactive = inactive
    }

    var isSerial: Bool { width == 1 }
    var isSuspended: Bool { suspendCount > 0 || isInactive }

    /// Whether a drainer may take the head of the FIFO now.
    var canTakeHead: Bool {
        // `running` first: while a drainer runs a serial queue this answers without
        // touching the head node, which the drainer's core owns.
        if running >= width { return false }
        guard !isSuspended, let head = fifo.head, !barrierRunning else { return false }
        if head.pointee.isBarrier { return running == 0 }
        return true
    }

    // MARK: Transitions

    /// (1) A node arrives. When it is more urgent than everything before it, it
    /// becomes the override marker: the raise it causes lasts until it has run.
    mutating func append(_ node: WorkNodeRef) {
        noteArrival(node, priority: node.pointee.priority, behindOthers: !fifo.isEmpty)
        fifo.append(node)
    }

    /// (1) for a node that joins the FIFO as part of a chain (`fifo.append(chain:)`):
    /// `behindOthers` when the FIFO or the chain already holds a node before it.
    @inline(__always)
    mutating func noteArrival(_ node: WorkNodeRef, priority: QoSPriority, behindOthers: Bool) {
        if behindOthers && priority > pendingMaxPriority { overrideMarker = node }
        if node.pointee.isBarrier { barriersPending += 1 }
        if priority > pendingMaxPriority { pendingMaxPriority = priority }
    }

    /// (1),(3),(4),(7) Whether a new token must go to the target. Concurrent queues
    /// may have up to `parallelism` tokens and drainers out at once.
    mutating func wakeup(parallelism: Int) -> DispatchQueue.WakeAction {
        guard canTakeHead else { return .none }
        let limit = isSerial ? 1 : min(Int(width), parallelism)
        guard Int(tokensOutstanding + running) < limit, Int(tokensOutstanding) < fifo.count else { return .none }
        return newToken(pendingMaxPriority)
    }

    /// (5) A node of `priority` arrived while a token is already out: the token must
    /// be as urgent — an extra token where it belongs when the target is a root (the
    /// less urgent one finds nothing and is dropped), else a raise of the target.
    mutating func raise(_ priority: QoSPriority) -> DispatchQueue.WakeAction {
        guard tokensOutstanding > 0, priority > tokenPriority, !isSuspended else { return .none }
        tokenPriority = priority
        return targetIsRoot ? newToken(priority) : .raiseTarget(priority)
    }

    /// Counts a new token and picks its node. The queue's embedded token node is used
    /// whenever it is free — always so when no token is outstanding — so waking a
    /// queue never waits for the pool, even when the pool is full of its items.
    mutating func newToken(_ priority: QoSPriority) -> DispatchQueue.WakeAction {
        tokensOutstanding += 1
        if priority > tokenPriority { tokenPriority = priority }
        let embedded = !embeddedTokenInUse
        if embedded { embeddedTokenInUse = true }
        return .pushToken(priority, embedded: embedded)
    }

    /// (2) A token was taken from the target.
    mutating func tokenTaken() {
        tokensOutstanding -= 1
        if tokensOutstanding == 0 { tokenPriority = .lowest }
    }

    /// The drainer took `node`: once the node that raised the queue has been reached,
    /// the queue drains at the priority of what is left (GCD: the override lasts
    /// until the item has run). Scans at most 128 nodes; a longer FIFO keeps the
    /// raised priority until it empties.
    mutating func lowerPriorityIfPassed(_ node: WorkNodeRef) {
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

    /// (6) A synchronous caller takes a slot if the queue could run its closure now
    /// (nothing pending ahead of it on a serial queue or for a barrier). Returns
    /// whether it did.
    mutating func takeSyncSlot(asBarrier: Bool) -> Bool {
        let free = !isSuspended && !barrierRunning
            && (isSerial || asBarrier ? running == 0 && fifo.isEmpty : running < width && barriersPending == 0)
        if !free { return false }
        running += 1
        if asBarrier && !isSerial { barrierRunning = true }
        return true
    }

    /// (7) The synchronous caller gives its slot back.
    mutating func giveSyncSlot(wasBarrier: Bool) {
        running -= 1
        if wasBarrier && !isSerial { barrierRunning = false }
    }
}
