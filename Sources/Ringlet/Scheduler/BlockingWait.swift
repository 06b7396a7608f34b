/// What a blocked thread waits on; named in the deadlock report.
enum WaitReason {
    case semaphore(DispatchSemaphore)
    case group(DispatchGroup)
    case workItem(DispatchWorkItem)
    case sync(DispatchQueue)
    case nodePool

    var description: String {
        switch self {
        case .semaphore(let semaphore): return "DispatchSemaphore.wait() on \(semaphore.diagnosticName)"
        case .group: return "DispatchGroup.wait()"
        case .workItem: return "DispatchWorkItem.wait()"
        case .sync(let queue): return "sync onto queue '\(queue.label)'"
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
        guard let worker = ThreadContext.currentIfPresent?.worker else { return body() }
        worker.scheduler.workerWillBlock(worker, reason: reason, timed: timed)
        defer { worker.scheduler.workerDidUnblock(worker) }
        return body()
    }

    /// Sleeps on `event` while it still shows `seen`, at most `timeoutNanoseconds`
    /// (negative: no limit). Returns false on timeout. On a pool thread that finds
    /// every pool thread blocked, sleeps at most the deadlock grace period at a time
    /// and runs the deadlock check between sleeps.
    static func sleep(on event: FutexEvent, seen: UInt32, timeoutNanoseconds: Int64) -> Bool {
        guard let worker = ThreadContext.currentIfPresent?.worker else {
            return event.wait(ifUnchangedFrom: seen, timeoutNanoseconds: timeoutNanoseconds)
        }
        let scheduler = worker.scheduler
        let grace = scheduler.configuration.deadlockGraceNanoseconds
        let deadline = timeoutNanoseconds < 0 ? UInt64.max
            : MonotonicClock.nanoseconds &+ UInt64(timeoutNanoseconds)
        while true {
            let now = MonotonicClock.nanoseconds
            if now >= deadline { return false }
            let remaining = deadline == UInt64.max ? Int64.max : Int64(deadline - now)
            let watching = scheduler.everyWorkerBlocked
            let slice = watching ? min(remaining, grace) : (deadline == UInt64.max ? -1 : remaining)
            if event.wait(ifUnchangedFrom: seen, timeoutNanoseconds: slice) { return true }
            if event.snapshot != seen { return true }
            if watching { scheduler.checkForDeadlock() }
        }
    }
}
