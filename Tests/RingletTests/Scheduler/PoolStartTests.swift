// The pool's start: `Runtime.start` returns once every pool thread has made its first
// look at the run queues. Before, it returned once each had set its priority, and a
// reserve thread still on its way to its first park missed the wake-up of work that
// came for it (a worker blocked, work arrived, nothing woke the reserve: the work
// waited for ever). Each test holds the reserve thread back before its first look and
// runs in a child process with its own small pool.

import Synchronization
import Testing
@testable import Ringlet

/// cores 1 × 2 workers (1 high band, 1 utility band) + 1 reserve, the reserve thread
/// held back 300 ms before its first look at the run queues.
private func startWithASlowReserve() {
    Scheduler.beforeFirstLook.install { worker in
        if worker.band == .reserve { sleepMilliseconds(300) }
    }
    startRuntime(RuntimeConfiguration(cores: 1, workersPerCore: 2, reservePerCore: 1))
}

@Suite struct PoolStartTests {
    @Test func startReturnsOnceEveryThreadHasLookedForWork() async {
        await #expect(processExitsWith: .success) {
            startWithASlowReserve()
            let parked = Runtime.statistics.parkedThreads
            #expect(parked == 3, "Runtime.start returned with \(parked) of 3 pool threads parked")
        }
    }

    /// The threads start one at a time, in the order of the plan (high band first), so
    /// that they make their first allocations in that order and the C library spreads
    /// the high band over its malloc arenas (Scheduler.start). Worker 0 is held 100 ms
    /// before its first look: started at once, the others would look meanwhile.
    @Test func eachThreadIsCreatedOnceTheOneBeforeHasLooked() async {
        await #expect(processExitsWith: .success) {
            let order = Mutex<[Int]>([])
            Scheduler.beforeFirstLook.install { worker in
                if worker.index == 0 { sleepMilliseconds(100) }
                order.withLock { $0.append(worker.index) }
            }
            startRuntime(twoCoreConfiguration())
            let seen = order.withLock { $0 }
            #expect(seen == Array(0..<seen.count) && seen.count == Runtime.statistics.workers + Runtime.statistics.reserve,
                    "the pool threads made their first looks in the order \(seen)")
        }
    }

    /// The stall test's first steps, right after start: the high-band worker blocks
    /// on a semaphore, then more default work arrives. The reserve must cover it.
    @Test func workArrivingRightAfterStartIsCoveredByTheReserve() async {
        await #expect(processExitsWith: .success) {
            startWithASlowReserve()
            let semaphore = DispatchSemaphore(value: 0)
            DispatchQueue.global().async { semaphore.wait() }
            #expect(eventually { blockedThreadCount == 1 })
            let covered = DispatchSemaphore(value: 0)
            DispatchQueue.global().async { covered.signal() }
            #expect(waited(covered), "default work behind a blocked worker never ran: the reserve was not woken")
            semaphore.signal()
        }
    }
}
