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
        let band = context.worker?.band
        let scheduler = Runtime.shared.scheduler
        let index = RunQueueIndex.of(tokenPriority)
        var budget = Runtime.shared.configuration.drainBatch
        drainOverride = .lowest
        while canTakeHeadLocked, let node = fifo.removeFirst() {
            let isBarrier = node.pointee.isBarrier
            if isBarrier {
                barriersPending -= 1
                barrierRunning = true
            }
            running += 1
            lowerPriorityIfPassedLocked(node)
            let helper: WakeAction = isSerial || isBarrier ? .none : wakeupIfNeededLocked()
            lock.unlock()
            perform(helper)
            NodeRunner.run(node, from: self, context: context)
            lock.lock()
            running -= 1
            if isBarrier { barrierRunning = false }
            budget -= 1
            if budget == 0 { break }
            if topLevel, let band {
                if drainOverride != .lowest, !band.indices.contains(RunQueueIndex.of(drainOverride)) { break }
                if scheduler.hasMoreUrgentWork(than: index, for: band) { break }
            }
        }
        drainOverride = .lowest
        let action = wakeupIfNeededLocked()
        lock.unlock()
        perform(action)
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
            pool.release(node)
            let owner = queue ?? RootQueues.shared.queue(for: priority.level)
            context.running(on: owner, at: priority) { block() }
            group?.leave()
        case .workItem:
            let item = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: DispatchWorkItem.self)
            let group = node.pointee.group
            pool.release(node)
            let owner = queue ?? RootQueues.shared.queue(for: priority.level)
            context.running(on: owner, at: priority) { item.invokeFromQueue() }
            group?.leave()
        case .queueToken:
            let child = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: DispatchQueue.self)
            if node == child.embeddedToken { child.releaseEmbeddedToken() } else { pool.release(node) }
            child.drain(tokenPriority: priority, from: queue, context: context, topLevel: queue == nil)
        case .syncWaiter:
            let waiter = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: SyncWaiter.self)
            var block = node.pointee.block
            pool.release(node)
            let owner = queue ?? RootQueues.shared.queue(for: priority.level)
            context.running(on: owner, at: priority) { block.unsafelyUnwrapped() }
            // Drop the caller's closure before waking it: `sync` lent it to us
            // through withoutActuallyEscaping.
            block = nil
            waiter.signal()
        }
    }
}
