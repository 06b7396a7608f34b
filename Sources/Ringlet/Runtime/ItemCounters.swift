
/// Items submitted and run, per QoS level, counted by one thread; Swift concurrency
/// jobs count as items and also in two slots of their own.
///
/// Each thread counts in its own `ThreadContext` with single-writer stores (no
/// locked instruction on the per-item path); `Runtime.statistics` sums every live
/// thread's counters and those of threads that have exited.
// @unchecked Sendable: single-writer counters stored and read with relaxed atomics (SingleWriterCounter).
final class ItemCounters: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<Int64>

    init() {
        slots = .allocate(capacity: 2 * QoSLevel.count + 3)
        slots.initialize(repeating: 0, count: 2 * QoSLevel.count + 3)
    }

    deinit { slots.deallocate() }

    /// Called by the owning thread only.
    @inline(__always)
    func countSubmitted(_ level: QoSLevel) { SingleWriterCounter.add(slots + level.rawValue, 1) }

    /// Called by the owning thread only.
    @inline(__always)
    func countRan(_ level: QoSLevel) { SingleWriterCounter.add(slots + QoSLevel.count + level.rawValue, 1) }

    /// A Swift concurrency job was enqueued (also counted by `countSubmitted`).
    /// Called by the owning thread only.
    @inline(__always)
    func countJobSubmitted() { SingleWriterCounter.add(slots + 2 * QoSLevel.count, 1) }

    /// Called by the owning thread only.
    @inline(__always)
    func countJobRan() { SingleWriterCounter.add(slots + 2 * QoSLevel.count + 1, 1) }

    var jobsSubmitted: Int { Int(SingleWriterCounter.read(slots + 2 * QoSLevel.count)) }
    var jobsRan: Int { Int(SingleWriterCounter.read(slots + 2 * QoSLevel.count + 1)) }

    /// A serial queue's drainer began to spin for another push (called by the owning
    /// thread only).
    @inline(__always)
    func countSpin() { SingleWriterCounter.add(slots + 2 * QoSLevel.count + 2, 1) }

    var spins: Int { Int(SingleWriterCounter.read(slots + 2 * QoSLevel.count + 2)) }

    func submitted(_ level: QoSLevel) -> Int { Int(SingleWriterCounter.read(slots + level.rawValue)) }
    func ran(_ level: QoSLevel) -> Int { Int(SingleWriterCounter.read(slots + QoSLevel.count + level.rawValue)) }
}

/// Every thread's counters, so statistics can add them up.
// @unchecked Sendable: the lists under `lock`.
final class CounterRegistry: @unchecked Sendable {
    static let shared = CounterRegistry()
    private let lock = FutexLock()
    private var live: [ItemCounters] = []
    private var retiredSubmitted = Array(repeating: 0, count: QoSLevel.count)
    private var retiredRan = Array(repeating: 0, count: QoSLevel.count)
    private var retiredSpins = 0
    private var retiredJobs = (submitted: 0, ran: 0)

    func register(_ counters: ItemCounters) {
        lock.withLock { live.append(counters) }
    }

    /// The thread owning `counters` has exited: keep its totals.
    func retire(_ counters: ItemCounters) {
        lock.withLock {
            for level in QoSLevel.allLevels {
                retiredSubmitted[level.rawValue] += counters.submitted(level)
                retiredRan[level.rawValue] += counters.ran(level)
            }
            retiredSpins += counters.spins
            retiredJobs.submitted += counters.jobsSubmitted
            retiredJobs.ran += counters.jobsRan
            live.removeAll { $0 === counters }
        }
    }

    /// Totals per level: (submitted, ran), and Swift concurrency jobs (submitted, ran).
    func totals() -> (submitted: [Int], ran: [Int], jobs: (submitted: Int, ran: Int)) {
        lock.withLock {
            var submitted = retiredSubmitted
            var ran = retiredRan
            var jobs = retiredJobs
            for counters in live {
                for level in QoSLevel.allLevels {
                    submitted[level.rawValue] += counters.submitted(level)
                    ran[level.rawValue] += counters.ran(level)
                }
                jobs.submitted += counters.jobsSubmitted
                jobs.ran += counters.jobsRan
            }
            return (submitted, ran, jobs)
        }
    }

    /// Spins of serial-queue drainers since start (`RuntimeStatistics.drainSpins`).
    func spinTotal() -> Int {
        lock.withLock { live.reduce(retiredSpins) { $0 + $1.spins } }
    }
}
