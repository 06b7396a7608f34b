/// The run step of the layers above the scheduler: runs one node taken from a root
/// run queue (the scheduler calls it through `Scheduler.runNode`) or from a queue's
/// FIFO, whatever it carries — a closure, a work item, a queue's wake-up
/// token (which drains a batch of that queue), a contended `sync`, one of a
/// source's own nodes, or a Swift concurrency job (Concurrency/JobNode.swift). It
/// returns the node to the pool before the work runs, so a long item does not hold
/// a node, and marks the thread as running that queue's
/// work at the item's QoS (`ThreadContext.enter`) for the item's duration.
///
/// Called by `Worker.execute` (nodes from the root run queues) and by the drains
/// (DispatchQueue+Drain.swift) for nodes of a queue's FIFO.
enum NodeRunner {
    static func run(_ node: WorkNodeRef, from queue: DispatchQueue?, context: ThreadContext) {
        let priority = node.pointee.priority
        let root = node.pointee.submittedRoot
        let crumb = node.pointee.crumb
        switch node.pointee.kind {
        case .block:
            // Move the closure and group out: no reference-count traffic.
            let block = node.pointee.takeBlock()!
            let group = WorkNode.takeBlockGroup(node)
            RuntimeParts.withPool { $0.releaseTaken(node, context: context) }
            let runsOn = owner(queue, priority, root)
            let saved = context.enter(runsOn, at: priority, crumb: crumb)
            context.traceStarted(.block, runsOn, priority)
            block()
            // Released while the thread is still on the queue, as Dispatch does: a
            // deinit this runs sees the queue current (its specifics, `sync` onto it
            // caught as the misuse it is), never a thread that looks free.
            _ = consume block
            context.traceFinished()
            context.counters.countRan(priority.level)
            if let group { DispatchGroup.leave(closures: 1, of: group) }
            context.restore(saved)
        case .workItem:
            let item = unsafeDowncast(node.pointee.takeObject().unsafelyUnwrapped, to: DispatchWorkItem.self)
            let leaveGroup = node.pointee.takeBlock()
            let ticket = node.pointee.ticket
            release(node, context)
            let runsOn = owner(queue, priority, root)
            let saved = context.enter(runsOn, at: priority, crumb: crumb)
            context.traceStarted(.workItem, runsOn, priority)
            let ran = item.invokeFromQueue(ticket: ticket)
            // The queue's reference (maybe the item's last, and with it the closure's)
            // and the group's leave go on the queue too.
            _ = consume item
            context.traceFinished()
            if ran { context.counters.countRan(priority.level) }
            leaveGroup?()
            _ = consume leaveGroup
            context.restore(saved)
        case .queueToken:
            let child = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: DispatchQueue.self)
            if node == child.embeddedToken { child.releaseEmbeddedToken() } else { release(node, context) }
            if let tail = child.drain(tokenPriority: priority, from: queue, context: context, topLevel: queue == nil) {
                drainChain(from: child, tail: tail, context: context)
            }
        case .sourceNode:
            // The source's own node: not released to the pool; the source may push it
            // again while it runs. `source` keeps the source alive meanwhile.
            let source = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: DispatchSource.self)
            let runsOn = owner(queue, priority, root)
            let saved = context.enter(runsOn, at: priority, crumb: crumb)
            context.traceStarted(.sourceHandler, runsOn, priority)
            source.run(node)
            context.traceFinished()
            context.restore(saved)
            context.counters.countRan(priority.level)
        case .job:
            // The node goes back to the pool inside, before the job runs.
            JobNode.run(node, from: queue, root: root, context: context)
        case .syncWaiter:
            let waiter = unsafeDowncast(node.pointee.takeObject().unsafelyUnwrapped, to: SyncWaiter.self)
            let borrowed = waiter.callerHolds.count
            context.outerQueues.append(contentsOf: waiter.callerHolds)
            runLentClosure(node.pointee.takeBlock()!, on: waiter.runsOn, priority: priority, crumb: crumb,
                           context: context, node: node)
            context.outerQueues.removeLast(borrowed)
            // `sync` lent us its closure through withoutActuallyEscaping: our last
            // reference died with runLentClosure's frame, so the caller may go on.
            waiter.signal()
        }
    }

    /// Drains the rest of a deep target chain in this one frame: `held` stopped at
    /// `tail`, a child's token, keeping its slot (`DispatchQueue.deepChainDepth`).
    /// Each child drained here may stop at its own child's token in turn; the queues
    /// whose slots are so kept wait in a heap array, and their drains end, innermost
    /// first, once the deepest has run.
    @inline(never)
    static func drainChain(from held: DispatchQueue, tail: WorkNodeRef, context: ThreadContext) {
        var holding = [held]
        var next: WorkNodeRef? = tail
        while let node = next {
            let child = unsafeDowncast(node.pointee.object.unsafelyUnwrapped, to: DispatchQueue.self)
            let priority = node.pointee.priority
            if node == child.embeddedToken { child.releaseEmbeddedToken() } else { release(node, context) }
            next = child.drain(tokenPriority: priority, from: holding.last, context: context, topLevel: false)
            if next != nil { holding.append(child) }
        }
        for queue in holding.reversed() { queue.finishHeldDrain(context: context) }
    }

    /// Gives a contended sync's caller the queue's slot: the node (and with it the
    /// lent closure) is released first, then the caller is woken to run it itself.
    static func handOver(_ node: WorkNodeRef, context: ThreadContext) {
        let waiter = unsafeDowncast(node.pointee.takeObject().unsafelyUnwrapped, to: SyncWaiter.self)
        release(node, context)
        waiter.signal(handedOver: true)
    }

    @inline(never)
    private static func runLentClosure(_ block: () -> Void, on runsOn: Unmanaged<DispatchQueue>,
                                       priority: QoSPriority, crumb: UInt64, context: ThreadContext,
                                       node: WorkNodeRef) {
        release(node, context)
        let saved = context.enter(runsOn, at: priority, crumb: crumb)
        context.traceStarted(.syncBlock, runsOn, priority)
        block()
        context.traceFinished()
        context.restore(saved)
    }

    /// The queue an item runs on, unretained: the draining queue (kept alive by its
    /// token) or, for a node from a root run queue, the global queue of its QoS. A
    /// retain here would write the queue's reference count, a cache line its
    /// producers write too.
    @inline(__always)
    static func owner(_ queue: DispatchQueue?, _ priority: QoSPriority,
                              _ root: UInt8) -> Unmanaged<DispatchQueue> {
        if let queue { return Unmanaged.passUnretained(queue) }
        if root != 0, let level = QoSLevel(rawValue: Int(root) - 1) {
            return RootQueues.shared.unmanagedQueue(for: level)
        }
        return RootQueues.shared.unmanagedQueue(for: priority.level)
    }

    @inline(__always)
    static func release(_ node: WorkNodeRef, _ context: ThreadContext) {
        RuntimeParts.withPool { $0.release(node, context: context) }
    }
}
