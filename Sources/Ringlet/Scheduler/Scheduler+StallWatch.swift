import Synchronization

/// The stall watch: while runnable work waits for a thread, or every pool thread is
/// blocked, the manager thread looks at the pool every quarter of the grace period
/// (`deadlockGraceMilliseconds`) — and not at all otherwise, so an idle runtime
/// still makes no wake-ups.
///
/// It reports (once per episode, on stderr):
/// - a **stall**: work of a QoS class has waited the whole grace period and no node
///   of that class was taken meanwhile — every thread that may run it is blocked or
///   busy, whether or not the other bands are idle. A warning: the work may still run.
/// - a **deadlock**: every pool thread has been blocked in a wait without a timeout
///   for the grace period, nothing ran, and work is pending. When every one of those
///   waits can only be ended by queued work (`sync` onto a queue that does not lead
///   to the main queue, `DispatchWorkItem.wait`, a free work node) nothing can ever
///   run again: the report is printed and the process stops. When a thread outside
///   the pool could end a wait (a semaphore or a group another thread may signal),
///   the report is a warning and the process keeps waiting.
///
///   idle --(1) work waits, or a thread blocks--> armed --(2) tick--> armed
///   armed --(3) tick finds nothing waiting and someone free--> idle
///
///   (1) Scheduler.enqueue / workerWillBlock (armWatchIfIdleLocked)
///   (2),(3) watchTick, on the manager thread
struct StallWatch {
    /// A tick is scheduled on the manager.
    var armed = false
    /// Per QoS class: nodes taken when progress was last seen, when it was seen,
    /// and whether the current stall was reported.
    var seenTaken = [UInt64](repeating: 0, count: 5)
    var since = [UInt64](repeating: 0, count: 5)
    var reported = [Bool](repeating: false, count: 5)
    /// Per pool thread: items started when last seen, and since when unchanged.
    var workerStarted: [UInt] = []
    var workerSince: [UInt64] = []
    /// Since when every pool thread is blocked without a timeout, and `progress` then.
    var allBlockedSince: UInt64?
    var progressWhenAllBlocked: UInt64 = 0
    var deadlockReported = false

    mutating func everyThreadBlocked(progress: UInt64) {
        allBlockedSince = MonotonicClock.nanoseconds
        progressWhenAllBlocked = progress
    }

    mutating func someThreadUnblocked() {
        allBlockedSince = nil
        deadlockReported = false
    }
}

extension Scheduler {
    /// The watch's period: while work waits for a thread, `coverCheckMilliseconds`
    /// (so a worker blocked in the kernel is covered within two periods,
    /// Scheduler+KernelCover.swift); otherwise, and when covering is off, a quarter of
    /// the grace period (at least 1 ms), so a stall is reported between one and one
    /// and a quarter grace periods after it began.
    func watchPeriod(workWaits: Bool) -> UInt64 {
        let cover = UInt64(configuration.coverCheckMilliseconds) * 1_000_000
        let stall = max(UInt64(configuration.deadlockGraceNanoseconds) / 4, 1_000_000)
        return workWaits && cover > 0 ? min(cover, stall) : stall
    }

    /// Invoked with the lock held. Arms the watch unless it is armed; true when the
    /// caller must schedule the first tick (after dropping the lock).
    func armWatchIfIdleLocked() -> Bool {
        if watch.armed { return false }
        watch.armed = true
        let now = MonotonicClock.nanoseconds
        for ordinal in 0..<5 {
            watch.seenTaken[ordinal] = takenPerClass[ordinal]
            watch.since[ordinal] = now
            watch.reported[ordinal] = false
        }
        return true
    }

    /// Asks the manager for the next tick (a one-shot in its timer structure).
    func scheduleWatchTick(workWaits: Bool = true) {
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let period = watchPeriod(workWaits: workWaits)
        // A wide window: the look may share a wake-up with other timers.
        manager.submit(.oneShot(deadline: MonotonicClock.nanoseconds &+ period, leeway: period / 2, wall: false,
                                action: { [unowned(unsafe) self] in watchTick() }))
    }

    /// One look at the pool, on the manager thread: reports what has stalled, and
    /// schedules the next look while work waits or the pool is blocked.
    func watchTick() {
        let now = MonotonicClock.nanoseconds
        let grace = UInt64(configuration.deadlockGraceNanoseconds)
        lock.lock()
        var stalled: [QoSLevel] = []
        for ordinal in 0..<5 {
            let waiting = runQueues.count(ofClass: ordinal)
            if takenPerClass[ordinal] != watch.seenTaken[ordinal] || waiting == 0 {
                watch.seenTaken[ordinal] = takenPerClass[ordinal]
                watch.since[ordinal] = now
                watch.reported[ordinal] = false
            } else if now &- watch.since[ordinal] >= grace && !watch.reported[ordinal] {
                watch.reported[ordinal] = true
                stalled.append(RunQueueIndex.level(ofIndex: ordinal * RunQueueIndex.perClass))
            }
        }
        updateRunningSinceLocked(now)
        let workWaits = runQueues.count > 0
        let candidates = workWaits && configuration.coverCheckMilliseconds > 0 ? coverCandidatesLocked(now: now) : []
        let allBlocked = untimedBlockedCount == workers.count
        let deadlockCandidate = allBlocked && !watch.deadlockReported && progress == watch.progressWhenAllBlocked
            && watch.allBlockedSince.map { now &- $0 >= grace } ?? false
        let snapshot = stalled.isEmpty && !deadlockCandidate ? nil : snapshotLocked(now: now)
        let rearm = workWaits || allBlocked
        watch.armed = rearm
        lock.unlock()
        if !candidates.isEmpty { coverWorkersBlockedInKernel(candidates, now: now) }
        if let snapshot {
            if deadlockCandidate, snapshot.hasPendingWork {
                lock.withLock { watch.deadlockReported = true }
                StallReport.reportDeadlock(snapshot, configuration: configuration)
            } else if !stalled.isEmpty {
                StallReport.reportStall(of: stalled, snapshot, configuration: configuration)
            }
        }
        if rearm { scheduleWatchTick(workWaits: workWaits) }
    }

    /// Invoked with the lock held. Notes, per pool thread, since when it has been on
    /// the same item.
    private func updateRunningSinceLocked(_ now: UInt64) {
        if watch.workerStarted.count != workers.count {
            watch.workerStarted = Array(repeating: 0, count: workers.count)
            watch.workerSince = Array(repeating: now, count: workers.count)
        }
        for (index, worker) in workers.enumerated() {
            let started = worker.context?.itemsStarted.load(ordering: .relaxed) ?? 0
            if started != watch.workerStarted[index] || worker.state != .running {
                watch.workerStarted[index] = started
                watch.workerSince[index] = now
            }
        }
    }

    /// Invoked with the lock held: what the report needs, with references taken so
    /// that the text can be made after the lock is dropped.
    func snapshotLocked(now: UInt64) -> StallReport.Snapshot {
        var threads: [StallReport.ThreadState] = []
        for (index, worker) in workers.enumerated() {
            let context = worker.context
            let blockedQueue = worker.state == .blocked ? context?.currentQueue : nil
            threads.append(StallReport.ThreadState(
                name: worker.name, band: worker.band, state: worker.state, blockedOn: context?.blockedOn,
                coveredInKernel: worker.coveredInKernel,
                blockedQueue: blockedQueue, queueAddress: context?.currentQueueAddress ?? 0,
                onItemFor: index < watch.workerSince.count ? now &- watch.workerSince[index] : 0,
                priority: context?.currentPriority ?? QoSPriority(.unspecified),
                crumb: worker.state == .running || worker.state == .blocked
                    ? context?.runningCrumb.load(ordering: .relaxed) ?? 0 : 0))
        }
        var tokens: [(queue: DispatchQueue, level: QoSLevel)] = []
        var looseItems = Array(repeating: 0, count: QoSLevel.count)
        runQueues.forEach { node in
            if node.pointee.kind == .queueToken, let object = node.pointee.object {
                tokens.append((unsafeDowncast(object, to: DispatchQueue.self), node.pointee.priority.level))
            } else {
                looseItems[node.pointee.priority.level.rawValue] += 1
            }
        }
        var waitedPerClass: [UInt64] = []
        for ordinal in 0..<5 { waitedPerClass.append(now &- watch.since[ordinal]) }
        return StallReport.Snapshot(threads: threads, tokens: tokens, looseItems: looseItems,
                                    waitedPerClass: waitedPerClass, reserveCount: reserveCount,
                                    runnable: runQueues.count)
    }
}
