import Synchronization

extension DispatchQueue {
    /// Drains a batch of this queue on the calling thread after its token was taken
    /// from `source` (the non-root queue whose FIFO held it; nil for a root run queue
    /// or the main thread). `topLevel` drains (straight under a root) also yield to
    /// more urgent work and hand off to another band when an inversion needs it.
    ///
    /// Returns a child's token when a deep nested drain stopped at it still holding
    /// this queue's slot (`deepChainDepth`): the caller drains that child next, then
    /// ends this drain with `finishHeldDrain` (NodeRunner.drainChain).
    func drain(tokenPriority: QoSPriority, from source: DispatchQueue?, context: ThreadContext,
               topLevel: Bool) -> WorkNodeRef? {
        lock.lock()
        state.tokenTaken()
        if !isMain, let current = state.target, current !== source, !(source == nil && current.isRoot) {
            // The target changed while the token waited: the queue moves as one unit.
            let action = state.newToken(tokenPriority)
            lock.unlock()
            perform(action)
            return nil
        }
        context.drainingQueues.append(Unmanaged.passUnretained(self))
        if isSerial {
            // Until it stops, this drainer takes in what producers leave in the inbox.
            inbox.drainerStarts()
            let tail = drainSerialLocked(index: RunQueueIndex.of(tokenPriority), context: context, topLevel: topLevel)
            inbox.drainerStops()
            takeInboxLocked()
            if tail != nil {
                lock.unlock()
                return tail
            }
        } else {
            drainConcurrentLocked(index: RunQueueIndex.of(tokenPriority), context: context, topLevel: topLevel)
        }
        endDrainLocked(context: context)
        return nil
    }

    /// Ends a drain whose serial drainer stopped at a child's token still holding the
    /// slot (`drain` returned the token), once that child's drain has ended.
    func finishHeldDrain(context: ThreadContext) {
        lock.lock()
        state.running = 0
        takeInboxLocked()
        endDrainLocked(context: context)
    }

    /// Leaves the queue's drain: gives its place in the thread's draining queues back
    /// and wakes the queue when it has more to run. Invoked with the lock held;
    /// returns with it released.
    private func endDrainLocked(context: ThreadContext) {
        context.drainingQueues.removeLast()
        overrideSignal.store(0, ordering: .relaxed)
        let action = wakeupOrRaiseLocked()
        lock.unlock()
        perform(action)
    }

    /// How many queues deep a thread drains nested before a serial drain that reaches
    /// a child's token stops there instead of draining the child inside its own frame:
    /// each level costs a few stack frames, and a worker's stack (512 KiB) holds far
    /// fewer levels than a chain may have. Deeper down, the drains follow one another
    /// in one frame, the slots they hold kept on the heap (NodeRunner.drainChain), so a
    /// chain of any depth takes constant stack. No chain this short pays anything for it.
    static let deepChainDepth = 32

    /// A serial drainer takes in the inbox, `drainTakeLimit` nodes at a time; a node
    /// more urgent than the drain makes it look at `overrideSignal` (the raise itself
    /// waits for the drain's end, `wakeupOrRaiseLocked`, whose take is whole). Invoked
    /// and returns with the lock held.
    @inline(__always)
    private func takeInboxWhileDrainingLocked() {
        guard takeInboxLocked(upTo: Self.drainTakeLimit) else { return }
        let raw = state.inboxPriority.rawValue
        if raw > overrideSignal.load(ordering: .relaxed) { overrideSignal.store(raw, ordering: .relaxed) }
    }

    /// How many nodes a draining take moves from the inbox at most: the take reads each
    /// node and the run reads it again, and 256 nodes (12 KiB) are still in the cache
    /// for the second read. A producer far ahead can leave chains far longer than that
    /// (`serial async` in `make bench`), each node then read twice from memory.
    static let drainTakeLimit = 256

    /// Whether a top-level drainer at run-queue `index` should stop after the item it
    /// just ran: an item it may not run made the queue urgent (hand-off to a worker
    /// that may), or more urgent work waits in the root run queues.
    @inline(__always)
    private func shouldYield(index: Int, band: WorkerBand?, scheduler: Scheduler) -> Bool {
        guard let band else { return false }
        let raw = overrideSignal.load(ordering: .relaxed)
        if raw != 0, !band.indices.contains(RunQueueIndex.of(QoSPriority(packed: raw))) { return true }
        return scheduler.hasMoreUrgentWork(than: index, for: band)
    }

    /// Serial queues: detach the whole FIFO under the lock and run it without the
    /// lock (the drainer holds the queue's one slot throughout, so nothing can
    /// overtake). A suspension, a reason to yield, a full batch with other work
    /// waiting, or a sync handed over puts the rest back at the head. Invoked and
    /// returns with the lock held.
    @discardableResult
    private func drainSerialLocked(index: Int, context: ThreadContext, topLevel: Bool) -> WorkNodeRef? {
        let band = context.worker?.band
        let scheduler = RuntimeParts.shared.scheduler.takeUnretainedValue()
        let batch = RuntimeParts.shared.drainBatch
        // Items were pushed while this drain ran: a producer keeps up with it.
        var producerSeen = false
        // Deep in a chain: stop at a child's token, keeping the slot, and hand the
        // token to the caller (`drain`'s comment). Constant while this drain runs.
        let stopsAtTokens = !topLevel && context.drainingQueues.count >= Self.deepChainDepth
        takeInboxWhileDrainingLocked()
        while state.canTakeHead {
            // Nested in a target's drain: a suspended target stops this queue too.
            if !topLevel && context.outerDrainStopped { return nil }
            // Detach the whole FIFO in O(1): no node is touched under the lock, so a
            // producer pushing meanwhile is never held up for long.
            let detached = state.fifo.removeAll()
            var chain = detached.first
            var detachedPriority = state.pendingMaxPriority
            let marker = state.overrideMarker
            state.pendingMaxPriority = .lowest
            state.overrideMarker = nil
            var ran = 0
            var markerPassed = marker == nil
            // A contended sync reached here is handed the queue's slot, so its closure
            // runs on the caller's thread (GCD). Only at the top level: nested inside a
            // target's drain, this thread also holds the target and keeps the work.
            let mayHandOver = topLevel && state.targetIsRoot && !isMain
            var handedOver = false
            var waiterNode: WorkNodeRef?
            var tail: WorkNodeRef?
            var untilBatchEnd = batch
            // Closures of one group in a row leave it once (`holdGroupLeave`).
            var held = HeldGroup()
            state.running = 1
            lock.unlock()
            var stop = false
            while let node = chain {
                chain = node.pointee.next
                if let next = chain, Self.holdGroupLeave(of: node, before: next, into: &held) {
                    // Held: its leave and its reference wait for the run's end.
                } else if held.leaves > 0 {
                    held.flush()
                }
                // A sync waiter to hand the slot to, or (deep in a chain) a child's token
                // for the caller to drain next: this drain stops at the node.
                let handsOver = mayHandOver && node.pointee.kind == .syncWaiter
                if handsOver || stopsAtTokens && node.pointee.kind == .queueToken {
                    ran += 1
                    stop = true
                    if handsOver {
                        handedOver = true
                        waiterNode = node
                    } else {
                        tail = node
                    }
                    if node == marker {
                        // The raising item is the one stopped at: the raise ends here.
                        markerPassed = true
                        detachedPriority = chain.map(Self.highestPriority(startingAt:)) ?? .lowest
                    }
                    break
                }
                let passedMarker = node == marker
                NodeRunner.run(node, from: self, context: context)
                ran += 1
                guard let rest = chain else { break }
                if passedMarker {
                    markerPassed = true
                    // The item that raised the queue has run: the raise ends here
                    // (GCD). What is left goes back to a worker of its own band.
                    detachedPriority = Self.highestPriority(startingAt: rest)
                    if topLevel, let band, !band.indices.contains(RunQueueIndex.of(detachedPriority)) {
                        stop = true
                        break
                    }
                }
                if stopRequested.load(ordering: .acquiring) || (!topLevel && context.outerDrainStopped)
                    || (topLevel && shouldYield(index: index, band: band, scheduler: scheduler)) {
                    stop = true
                    break
                }
                // A full batch: go on only when nothing else waits at this level or
                // above (fairness between queues of one QoS).
                untilBatchEnd -= 1
                if untilBatchEnd == 0 {
                    untilBatchEnd = batch
                    if !topLevel || scheduler.hasWork(atOrAbove: index, for: band) {
                        stop = true
                        break
                    }
                }
            }
            if held.leaves > 0 { held.flush() }
            lock.lock()
            takeInboxWhileDrainingLocked()
            // Handed over, the slot now belongs to the sync caller, who releases it.
            // Stopped at a child's token, the slot stays this drain's until the child's
            // drain ends (`finishHeldDrain`).
            if !handedOver && tail == nil { state.running = 0 }
            if let rest = chain {
                // Put the rest back in front of what arrived meanwhile, in O(1); the
                // queue's priority covers both.
                state.fifo.prepend(first: rest, last: detached.last.unsafelyUnwrapped, count: detached.count - ran)
                if detachedPriority > state.pendingMaxPriority { state.pendingMaxPriority = detachedPriority }
                // The raising item is still ahead: the raise ends when it is reached.
                if !markerPassed && state.overrideMarker == nil { state.overrideMarker = marker }
            }
            if let waiterNode {
                // Only now, with the rest of the batch back in the FIFO under the lock,
                // may the caller run: whatever it unblocks comes after those items.
                NodeRunner.handOver(waiterNode, context: context)
            }
            if stop { return tail }
            if state.fifo.isEmpty {
                if !topLevel || band == nil || !waitBrieflyForPushLocked(context: context, producerSeen: producerSeen) {
                    return nil
                }
                producerSeen = true
                continue
            }
            producerSeen = true
            if shouldYield(index: index, band: band, scheduler: scheduler) { return nil }
        }
        return nil
    }

    /// Whether the drain keeps `node`'s group leave to do later, with one atomic
    /// operation for a run of closures of the same group (`async(group:)` in a loop)
    /// instead of one per item, whose cache line the producer's `enter()` pulls back
    /// each time. Only while the next node is a closure of the same group: the group
    /// cannot reach zero before that one has run anyway, so no waiter or notification
    /// sees a difference. The drain leaves for the held nodes before it runs anything
    /// else and when the batch ends. Moves the node's group into `held`.
    @inline(__always)
    private static func holdGroupLeave(of node: WorkNodeRef, before next: WorkNodeRef,
                                       into held: inout HeldGroup) -> Bool {
        guard node.pointee.kind == .block, next.pointee.kind == .block,
              let group = WorkNode.blockGroupAddress(node), group == WorkNode.blockGroupAddress(next) else { return false }
        held.add(WorkNode.takeBlockGroup(node).unsafelyUnwrapped)
        return true
    }

    /// The group leaves a serial drain holds for a run of closures of one group, done
    /// together, with one atomic operation, when the run ends.
    struct HeldGroup {
        private var group: Unmanaged<DispatchGroup>?
        /// Leaves owed, one per held node.
        private(set) var leaves = 0

        @inline(__always)
        mutating func add(_ reference: Unmanaged<DispatchGroup>) {
            group = reference
            leaves += 1
        }

        /// Leaves the group once for every held node.
        mutating func flush() {
            let owned = group.unsafelyUnwrapped
            DispatchGroup.leave(closures: leaves, of: owned)
            group = nil
            leaves = 0
        }
    }

    /// The most urgent priority in a detached chain (scans at most 256 nodes; a
    /// longer chain is assumed as urgent as its most urgent part seen so far, or
    /// userInteractive when nothing was seen).
    private static func highestPriority(startingAt first: WorkNodeRef) -> QoSPriority {
        var highest = QoSPriority.lowest
        var scanned = 0
        for node in NodeFIFO.nodes(startingAt: first) {
            if scanned == 256 { return max(highest, QoSPriority(.userInteractive)) }
            if node.pointee.priority > highest { highest = node.pointee.priority }
            scanned += 1
        }
        return highest
    }

    /// The queue ran dry: keep its slot and spin up to `spinMicroseconds` for another
    /// push, so a producer that keeps up does not pay a token and a wake-up per
    /// batch. Returns true when items arrived. Invoked and returns with the lock held.
    ///
    /// Only while spinning pays: after two spins in a row that saw no push, this worker
    /// spins again only for a queue whose producer pushed during the drain. Otherwise a
    /// worker going through many queues with a few items each (all pushed before) would
    /// spin at every one of them, one fruitless spin per item (`ringlet bench --scale`).
    private func waitBrieflyForPushLocked(context: ThreadContext, producerSeen: Bool) -> Bool {
        let spin = RuntimeParts.shared.spinMicroseconds
        if spin == 0 || state.isSuspended || (context.fruitlessSpins >= 2 && !producerSeen) { return false }
        let seen = pushCount.load(ordering: .relaxed)
        context.counters.countSpin()
        state.running = 1
        lock.unlock()
        // The shared counter is looked at with growing gaps: every look pulls the cache
        // line the producer writes on each push away from it.
        _ = ThreadControl.spin(until: MonotonicClock.nanoseconds &+ UInt64(spin) &* 1000) {
            !inbox.isEmpty || pushCount.load(ordering: .relaxed) != seen
        }
        lock.lock()
        takeInboxWhileDrainingLocked()
        state.running = 0
        let arrived = !state.fifo.isEmpty
        context.fruitlessSpins = arrived ? 0 : context.fruitlessSpins &+ 1
        return arrived
    }

    /// Concurrent queues: one item at a time, so several drainers share the queue and
    /// barriers wait for the items before them. Invoked and returns with the lock held.
    private func drainConcurrentLocked(index: Int, context: ThreadContext, topLevel: Bool) {
        let band = context.worker?.band
        let scheduler = RuntimeParts.shared.scheduler.takeUnretainedValue()
        var budget = RuntimeParts.shared.drainBatch
        while state.canTakeHead, topLevel || !context.outerDrainStopped, let node = state.fifo.removeFirst() {
            let isBarrier = node.pointee.isBarrier
            if isBarrier {
                state.barriersPending -= 1
                state.barrierRunning = true
            }
            state.running += 1
            state.lowerPriorityIfPassed(node)
            let helper: WakeAction = isBarrier ? .none : wakeupIfNeededLocked()
            lock.unlock()
            perform(helper)
            NodeRunner.run(node, from: self, context: context)
            lock.lock()
            state.running -= 1
            if isBarrier { state.barrierRunning = false }
            budget -= 1
            if budget == 0 {
                if !topLevel || scheduler.hasWork(atOrAbove: index, for: band) { return }
                budget = RuntimeParts.shared.drainBatch
            }
            if topLevel && shouldYield(index: index, band: band, scheduler: scheduler) { return }
        }
    }
}
