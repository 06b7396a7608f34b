
/// Items submitted and run, per QoS level, counted by one thread.
///
/// Each thread counts in its own `ThreadContext` with single-writer stores (no
/// locked instruction on the per-item path); `Runtime.statistics` sums every live
/// thread's counters and those of threads that have exited.
// @unchecked Sendable: single-writer counters stored and read with relaxed atomics (SingleWriterCounter).
final class ItemCounters: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<Int64>

    init() {
        slots = .allocate(capacity: 2 * QoSLevel.count + 1)
        slots.initialize(repeating: 0, count: 2 * QoSLevel.count + 1)
    }

    deinit { slots.deallocate() }

    /// Called by the owning thread only.
    @inline(__always)
    func countSubmitted(_ level: QoSLevel) { SingleWriterCounter.add(slots + level.rawValue, 1) }

    /// Called by the owning thread only.
    @inline(__always)
    func countRan(_ level: QoSLevel) { SingleWriterCounter.add(slots + QoSLevel.count + level.rawValue, 1) }

    /// A serial queue's drainer began to spin for another push (called by the owning
    /// thread only).
    @inline(__always)
    func countSpin() { SingleWriterCounter.add(slots + 2 * QoSLevel.count, 1) }

    var spins: Int { Int(SingleWriterCounter.read(slots + 2 * QoSLevel.count)) }

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
            live.removeAll { $0 === counters }
        }
    }

    /// Totals per level: (submitted, ran).
    func totals() -> (submitted: [Int], ran: [Int]) {
        lock.withLock {
            var submitted = retiredSubmitted
            var ran = retiredRan
            for counters in live {
                for level in QoSLevel.allLevels {
                    submitted[level.rawValue] += counters.submitted(level)
                    ran[level.rawValue] += counters.ran(level)
                }
            }
            return (submitted, ran)
        }
    }

    /// Spins of serial-queue drainers since start (`RuntimeStatistics.drainSpins`).
    func spinTotal() -> Int {
        lock.withLock { live.reduce(retiredSpins) { $0 + $1.spins } }
    }
}
