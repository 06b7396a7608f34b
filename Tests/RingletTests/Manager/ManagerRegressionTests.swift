// Regression tests from the review of the manager thread, asyncAfter and the sync hand-off.

import Synchronization
import Testing
@testable import Ringlet

@Suite(.serialized)
struct ManagerRegressionTests {
    /// `asyncAfter` takes its work node when it is called, so the manager only pushes
    /// it when the timer fires and never waits for the pool: timers keep firing while
    /// the pool is full (here, of items held by a suspended queue).
    @Test func timersFireWhileTheNodePoolIsFull() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2, workNodes: 64))
            let fired = DispatchSemaphore(value: 0)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { fired.signal() }
            let held = DispatchQueue(label: "review.held")
            held.suspend()
            let filled = DispatchGroup()
            filled.enter()
            DispatchQueue.global().async {
                for _ in 0..<200 { held.async {} }
                filled.leave()
            }
            #expect(eventually { Runtime.statistics.workNodeExhaustionWaits > 0 }, "the pool never filled")
            #expect(waited(fired), "the timer did not fire while the pool was full")
            held.resume()
            #expect(waited(filled))
        }
    }

    /// A contended sync on a serial queue straight on a global queue is handed the
    /// slot only after the drainer has put the rest of its batch back, so work pushed
    /// once the caller releases the slot still runs after the older items (FIFO).
    /// In a child with its own pool: each iteration holds two pool threads (the gate
    /// and the waiting sync), which in the test process competed with other suites'
    /// waits for the shared pool.
    @Test func handOverKeepsFIFOOrderUnderPushContention() async {
        await #expect(processExitsWith: .success) {
            startRuntime(twoCoreConfiguration())
            ManagerRegressionScenarios.handOverKeepsFIFOOrder(iterations: 1000)
        }
    }
}

enum ManagerRegressionScenarios {
    static func handOverKeepsFIFOOrder(iterations: Int) {
        var violations = 0
        for _ in 0..<iterations {
            let queue = DispatchQueue(label: "review.handover")
            let gate = DispatchSemaphore(value: 0)
            let order = Recorder<Int>()
            let allDone = DispatchGroup()
            queue.async { gate.wait() }
            allDone.enter()
            DispatchQueue.global().async {
                queue.sync {}
                allDone.leave()
            }
            // Wait until the sync waiter is queued behind the gate item.
            let limit = MonotonicClock.nanoseconds + 2_000_000_000
            while queue.pendingCount < 1 && MonotonicClock.nanoseconds < limit {}
            allDone.enter()
            queue.async {
                order.append(0)
                allDone.leave()
            }
            allDone.enter()
            DispatchQueue.global().async {
                for index in 1...200 {
                    allDone.enter()
                    queue.async {
                        order.append(index)
                        allDone.leave()
                    }
                }
                allDone.leave()
            }
            gate.signal()
            #expect(waited(allDone))
            let values = order.values
            if values.first != 0 || values != values.sorted() { violations += 1 }
        }
        #expect(violations == 0, "\(violations) of \(iterations) iterations ran items out of FIFO order")
    }
}
