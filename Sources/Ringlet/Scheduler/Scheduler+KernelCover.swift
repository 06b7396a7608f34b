import Synchronization

/// Covering workers blocked in the kernel. A worker that blocks in a Ringlet wait
/// says so and a reserve worker may run in its place; one that blocks in the kernel —
/// `read(2)` on a slow disk, `usleep`, a C library's lock, page faults — cannot say so.
/// While runnable work waits for a thread, the stall watch looks at the pool every
/// `coverCheckMilliseconds` (5 ms by default) and covers such a worker:
///
/// 1. a running worker that started no new item since the last look,
/// 2. whose CPU time advanced by less than an eighth of the period meanwhile (its
///    thread CPU clock: one cheap read per worker — a runnable thread that merely
///    waits for a CPU is told apart in step 3),
/// 3. and whose thread the kernel shows sleeping (state S or D in
///    /proc/self/task/<tid>/stat),
///
/// counts as blocked until it comes back to the scheduler, so that a reserve worker
/// may take the waiting work (`wakeReserveIfJustifiedLocked`). A worker blocked in the
/// kernel is so covered within two periods of the work's arrival. The reserve is
/// what bounds the cover, so the thread count never moves; a worker that spins on the
/// CPU is never covered (the stall report names it). An idle runtime never looks:
/// the watch runs only while work waits or every pool thread is blocked.
/// The look's own memory: each worker's CPU time at the previous look. Manager
/// thread only.
struct KernelCoverLook {
    var cpu: [UInt64?] = []
    var at: UInt64 = 0
}

extension Scheduler {
    /// A running worker, as a look saw it.
    struct CoverCandidate {
        let index: Int
        let worker: Worker
        let itemsStarted: UInt
        /// On the same item as at the previous look.
        let sameItem: Bool
    }

    /// Invoked with the lock held (on the manager thread), after
    /// `updateRunningSinceLocked(now)`: every running worker not covered yet.
    func coverCandidatesLocked(now: UInt64) -> [CoverCandidate] {
        var candidates: [CoverCandidate] = []
        for (index, worker) in workers.enumerated() where worker.state == .running && !worker.coveredInKernel {
            let started = worker.context?.itemsStarted.load(ordering: .relaxed) ?? 0
            let sameItem = index < watch.workerSince.count && watch.workerSince[index] != now
            candidates.append(CoverCandidate(index: index, worker: worker, itemsStarted: started, sameItem: sameItem))
        }
        return candidates
    }

    /// On the manager thread, without the lock: notes each running worker's CPU time,
    /// confirms which of those on the same item are blocked in the kernel (CPU time
    /// still since the last look, thread asleep), then covers them and wakes as many
    /// reserve workers as the waiting work and the reserve allow.
    func coverWorkersBlockedInKernel(_ candidates: [CoverCandidate], now: UInt64) {
        if coverLook.cpu.count != workers.count { coverLook.cpu = Array(repeating: nil, count: workers.count) }
        let elapsed = now &- coverLook.at
        var seen = Array<UInt64?>(repeating: nil, count: workers.count)
        var confirmed: [CoverCandidate] = []
        for candidate in candidates {
            guard let clock = candidate.worker.cpuClock,
                  let cpu = ThreadControl.cpuNanoseconds(of: clock) else { continue }
            seen[candidate.index] = cpu
            guard candidate.sameItem, let before = coverLook.cpu[candidate.index],
                  cpu &- before < elapsed / 8 else { continue }
            if ThreadControl.isSleepingInKernel(candidate.worker.threadID) { confirmed.append(candidate) }
        }
        coverLook.cpu = seen
        coverLook.at = now
        if confirmed.isEmpty { return }
        var toWake: [Worker] = []
        lock.lock()
        for candidate in confirmed {
            let worker = candidate.worker
            let started = worker.context?.itemsStarted.load(ordering: .relaxed) ?? 0
            guard worker.state == .running, !worker.coveredInKernel, started == candidate.itemsStarted else { continue }
            worker.coveredInKernel = true
            blockedCount += 1
            coveredInKernelTotal &+= 1
        }
        while runQueues.count > toWake.count, let reserve = wakeReserveIfJustifiedLocked() { toWake.append(reserve) }
        lock.unlock()
        for reserve in toWake { reserve.event.post() }
    }
}
