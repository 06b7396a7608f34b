/// What a blocked thread waits on; named in the stall report.
enum WaitReason {
    case semaphore(DispatchSemaphore)
    case group(DispatchGroup)
    case workItem(DispatchWorkItem)
    /// `sync` onto the first queue, waiting in the FIFO of the second: the same queue,
    /// or a busy queue up its target chain (the caller holds the ones below it).
    case sync(DispatchQueue, at: DispatchQueue)
    case nodePool

    var description: String {
        switch self {
        case .semaphore(let semaphore): return "DispatchSemaphore.wait() on \(semaphore.diagnosticName)"
        case .group: return "DispatchGroup.wait()"
        case .workItem: return "DispatchWorkItem.wait()"
        case .sync(let queue, let at):
            if at === queue { return "sync onto queue '\(queue.label)'" }
            return "sync onto queue '\(queue.label)', waiting for its target '\(at.label)'"
        case .nodePool: return "a free work node (the 'workNodes' pool is full)"
        }
    }
}

/// Every blocking wait in Ringlet goes through here, so the scheduler knows which
/// pool threads are blocked (to let a reserve worker cover them, and to notice a
/// deadlock). Waits on threads outside the pool cost nothing extra.
enum BlockingWait {
    /// Runs `body` (which sleeps) accounted as a wait for `reason`; `timed` when the
    /// wait has a timeout (it then never counts toward a deadlock).
    @inline(__always)
    static func perform<R>(_ reason: WaitReason, timed: Bool = false, _ body: () -> R) -> R {
        ForkGuard.check("waiting on \(reason.description)")
        guard let context = ThreadContext.currentIfPresent else { return body() }
        // A blocked thread's cached free nodes would be held hostage meanwhile.
        if context.nodeCacheCount > 0 { RuntimeParts.withPool { $0.giveBack(context, idling: true) } }
        guard let worker = context.worker else {
            return context.isMainThread ? MainThread.shared.blocked(on: reason, body) : body()
        }
        worker.scheduler.workerWillBlock(worker, reason: reason, timed: timed)
        defer { worker.scheduler.workerDidUnblock(worker) }
        return body()
    }

    /// Sleeps on `event` while it still shows `seen`, at most `timeoutNanoseconds`
    /// (negative: no limit). Returns false on timeout. The stall watch, on the
    /// manager thread, notices a pool that stays blocked: waits need not poll.
    @inline(__always)
    static func sleep(on event: FutexEvent, seen: UInt32, timeoutNanoseconds: Int64) -> Bool {
        event.wait(ifUnchangedFrom: seen, timeoutNanoseconds: timeoutNanoseconds)
    }
}
