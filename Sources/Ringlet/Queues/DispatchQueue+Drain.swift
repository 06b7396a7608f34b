import CRinglet

extension DispatchQueue {
    /// Drains a batch of this queue on the calling thread after its token was taken
    /// from `source` (the non-root queue whose FIFO held it; nil for a root run queue
    /// or the main thread). `topLevel` drains (straight under a root) also yield to
    /// more urgent work and hand off to another band when an inversion needs it.
    func drain(tokenPriority: QoSPriority, from source: DispatchQueue?, context: ThreadContext, topLevel: Bool) {
        lock.lock()
        tokensOutstanding -= 1
        if tokensOutstanding == 0 { self.tokenPriority = .lowest }
        if !isMain, let current = target, current !== source, !(source == nil && current.isRoot) {
            // The target changed while the token waited: the queue moves as one unit.
            let action = newTokenLocked(tokenPriority)
            lock.unlock()
            perform(action)
            return
        }
        if isSerial {
            drainSerialLocked(index: RunQueueIndex.of(tokenPriority), context: context, topLevel: topLevel)
        } else {
            drainConcurrentLocked(index: RunQueueIndex.of(tokenPriority), context: context, topLevel: topLevel)
        }
        overrideSignal.store(0, ordering: .relaxed)
        let action = wakeupIfNeededLocked()
        lock.unlock()
        perform(action)
    }

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

    /// Serial queues: detach up to a batch of nodes under one lock and run them
    /// without it (the drainer holds the queue's one slot throughout, so nothing can
    /// overtake). Between items, a suspension or a reason to yield puts the rest of
    /// the batch back at the head. Invoked and returns with the lock held.
    private func drainSerialLocked(index: Int, context: ThreadContext, topLevel: Bool) {
        let band = context.worker?.band
        let scheduler = Runtime.shared.scheduler
        let batch = Runtime.shared.configuration.drainBatch
        while canTakeHeadLocked {
            var chain = fifo.removeFirst()
            lowerPriorityIfPassedLocked(chain.unsafelyUnwrapped)
            var tail = chain.unsafelyUnwrapped
            var taken = 1
            while taken < batch, let node = fifo.removeFirst() {
                lowerPriorityIfPassedLocked(node)
                tail.pointee.next = node
                tail = node
                taken += 1
            }
            running = 1
            lock.unlock()
            var stop = false
            while let node = chain {
                chain = node.pointee.next
                NodeRunner.run(node, from: self, context: context)
                if chain != nil && (stopRequested.load(ordering: .acquiring)
                    || (topLevel && shouldYield(index: index, band: band, scheduler: scheduler))) {
                    stop = true
                    break
                }
            }
            lock.lock()
            running = 0
            if let rest = chain {
                fifo.prepend(chain: rest)
                for node in NodeFIFO.nodes(startingAt: rest) where node.pointee.priority > pendingMaxPriority {
                    pendingMaxPriority = node.pointee.priority
                }
            }
            if stop { return }
            if fifo.isEmpty {
                if !topLevel || band == nil || !waitBrieflyForPushLocked(scheduler: scheduler) { return }
                continue
            }
            // A full batch: go on only when nothing else waits at this level or above
            // (fairness between queues of one QoS) and nothing more urgent came.
            if !topLevel || scheduler.hasWork(atOrAbove: index, for: band) { return }
            if shouldYield(index: index, band: band, scheduler: scheduler) { return }
        }
    }

    /// The queue ran dry: keep its slot and spin up to `spinMicroseconds` for another
    /// push, so a producer that keeps up does not pay a token and a wake-up per
    /// batch. Returns true when items arrived. Invoked and returns with the lock held.
    private func waitBrieflyForPushLocked(scheduler: Scheduler) -> Bool {
        let spin = Runtime.shared.configuration.spinMicroseconds
        if spin == 0 || isSuspendedLocked { return false }
        let seen = pushCount.load(ordering: .relaxed)
        running = 1
        lock.unlock()
        let end = MonotonicClock.nanoseconds &+ UInt64(spin) &* 1000
        spinning: while true {
            for _ in 0..<32 {
                if pushCount.load(ordering: .relaxed) != seen { break spinning }
                rl_cpu_relax()
            }
            if MonotonicClock.nanoseconds >= end { break }
        }
        lock.lock()
        running = 0
        return !fifo.isEmpty
    }

    /// Concurrent queues: one item at a time, so several drainers share the queue and
    /// barriers wait for the items before them. Invoked and returns with the lock held.
    private func drainConcurrentLocked(index: Int, context: ThreadContext, topLevel: Bool) {
        let band = context.worker?.band
        let scheduler = Runtime.shared.scheduler
        var budget = Runtime.shared.configuration.drainBatch
        while canTakeHeadLocked, let node = fifo.removeFirst() {
            let isBarrier = node.pointee.isBarrier
            if isBarrier {
                barriersPending -= 1
                barrierRunning = true
            }
            running += 1
            lowerPriorityIfPassedLocked(node)
            let helper: WakeAction = isBarrier ? .none : wakeupIfNeededLocked()
            lock.unlock()
            perform(helper)
            NodeRunner.run(node, from: self, context: context)
            lock.lock()
            running -= 1
            if isBarrier { barrierRunning = false }
            budget -= 1
            if budget == 0 {
                if !topLevel || scheduler.hasWork(atOrAbove: index, for: band) { return }
                budget = Runtime.shared.configuration.drainBatch
            }
            if topLevel && shouldYield(index: index, band: band, scheduler: scheduler) { return }
        }
    }
}

/// Runs one node taken from a queue or a root run queue, returning it to the pool
/// before the work runs so a long item does not hold a node.
enum NodeRunner {
    static func run(_ node: WorkNodeRef, from queue: DispatchQueue?, context: ThreadContext) {
        let priority = node.pointee.priority
        let pool = Runtime.shared.pool
        switch node.pointee.kind {
        case .block:
            let block = node.pointee.block.unsafelyUnwrapped
            let group = node.pointee.group
            pool.release(node, context: context)
            let owner = queue ?? RootQueues.shared.queue(for: priority.level)
            context.running(on: owner, at: priority) { block() }
            group?.leave()
        case .workItem:
            let item = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: DispatchWorkItem.self)
            let group = node.pointee.group
            pool.release(node, context: context)
            let owner = queue ?? RootQueues.shared.queue(for: priority.level)
            context.running(on: owner, at: priority) { item.invokeFromQueue() }
            group?.leave()
        case .queueToken:
            let child = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: DispatchQueue.self)
            if node == child.embeddedToken { child.releaseEmbeddedToken() } else { pool.release(node, context: context) }
            child.drain(tokenPriority: priority, from: queue, context: context, topLevel: queue == nil)
        case .syncWaiter:
            let waiter = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: SyncWaiter.self)
            var block = node.pointee.block
            pool.release(node, context: context)
            let owner = queue ?? RootQueues.shared.queue(for: priority.level)
            context.running(on: owner, at: priority) { block.unsafelyUnwrapped() }
            // Drop the caller's closure before waking it: `sync` lent it to us
            // through withoutActuallyEscaping.
            block = nil
            waiter.signal()
        }
    }
}
