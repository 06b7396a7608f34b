// DispatchSemaphore: counting, timeouts that give their decrement back, one waiter
// woken per signal, and signal()'s return value. Every test leaves its semaphores at
// (or above) their starting value: releasing one below it traps (see MisuseTests).

import Testing
@testable import Ringlet

@Suite struct SemaphoreTests {
    @Test func countsDownFromItsStartingValue() {
        let semaphore = DispatchSemaphore(value: 3)
        for _ in 0..<3 { #expect(semaphore.wait(timeout: .now()) == .success) }
        #expect(semaphore.wait(timeout: .now()) == .timedOut)
        for _ in 0..<3 { semaphore.signal() }
        // The timed-out wait gave its decrement back: three more succeed, not two.
        for _ in 0..<3 { #expect(semaphore.wait(timeout: .now()) == .success) }
        #expect(semaphore.wait(timeout: .now()) == .timedOut)
        for _ in 0..<3 { semaphore.signal() }
    }

    @Test func waitTimesOutAfterTheDeadline() {
        let semaphore = DispatchSemaphore(value: 0)
        var start = monotonicNanoseconds
        #expect(semaphore.wait(timeout: .now() + 0.05) == .timedOut)
        #expect(secondsSince(start) >= 0.049)
        start = monotonicNanoseconds
        #expect(semaphore.wait(wallTimeout: .now() + 0.03) == .timedOut)
        #expect(secondsSince(start) >= 0.029)
        // A signal after timeouts is not lost: the next wait takes it at once.
        #expect(semaphore.signal() == 0)
        #expect(semaphore.wait(timeout: .now()) == .success)
    }

    @Test func signalBeforeWaitIsKept() {
        let semaphore = DispatchSemaphore(value: 0)
        #expect(semaphore.signal() == 0)
        #expect(semaphore.signal() == 0)
        #expect(semaphore.wait(timeout: .now()) == .success)
        #expect(semaphore.wait(wallTimeout: .now()) == .success)
        #expect(semaphore.wait(timeout: .now()) == .timedOut)
    }

    @Test func waitBlocksUntilSignalled() {
        let semaphore = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let order = Recorder<String>()
        DispatchQueue.global().async {
            semaphore.wait()
            order.append("woke")
            done.signal()
        }
        // The waiter is inside wait() (counted blocked on this semaphore), not done.
        #expect(eventually { blockedOn(semaphore) == 1 })
        #expect(done.wait(timeout: .now()) == .timedOut)
        order.append("signal")
        semaphore.signal()
        #expect(waited(done))
        #expect(order.values == ["signal", "woke"])
    }

    @Test func eachSignalWakesOneWaiter() {
        let semaphore = DispatchSemaphore(value: 0)
        let woken = AtomicCounter()
        let waiters = DispatchGroup()
        // Waiters on threads outside the pool's QoS bands would do too; global
        // queue items are what code usually uses.
        for _ in 0..<2 {
            DispatchQueue.global().async(group: waiters) {
                if semaphore.wait(timeout: deadline()) == .success { woken.increment() }
            }
        }
        semaphore.signal()
        #expect(eventually { woken.value == 1 })
        #expect(!eventually(within: 0.05) { woken.value > 1 })
        semaphore.signal()
        #expect(waited(waiters))
        #expect(woken.value == 2)
    }

    @Test func signalReportsWhetherItWokeAWaiter() {
        let semaphore = DispatchSemaphore(value: 0)
        // No waiter: 0, and the value goes up.
        #expect(semaphore.signal() == 0)
        #expect(semaphore.wait(timeout: .now()) == .success)
        // A waiter that has started waiting: 1. The waiter announces itself just before
        // it waits; give it a moment to get there, and repeat a few rounds so that one
        // slow scheduling decision cannot decide the result.
        var returns: [Int] = []
        for _ in 0..<5 {
            let aboutToWait = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                aboutToWait.signal()
                semaphore.wait()
                done.signal()
            }
            #expect(waited(aboutToWait))
            #expect(eventually { blockedOn(semaphore) == 1 })  // inside wait()
            returns.append(semaphore.signal())
            #expect(waited(done))
        }
        #expect(returns.contains(1), "signal() never reported a woken waiter: \(returns)")
        #expect(returns.allSatisfy { $0 == 0 || $0 == 1 })
    }

    @Test func timedOutWaiterDoesNotStealALaterSignal() {
        let semaphore = DispatchSemaphore(value: 0)
        let results = Recorder<DispatchTimeoutResult>()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            results.append(semaphore.wait(timeout: .now() + 0.02))
        }
        #expect(waited(group))
        #expect(results.values == [.timedOut])
        semaphore.signal()
        #expect(semaphore.wait(timeout: .now()) == .success)
    }

    @Test func boundsWorkInFlight() {
        // The classic use: a counting semaphore limits how many items run at once.
        let slots = DispatchSemaphore(value: 2)
        let meter = OverlapMeter()
        let queue = DispatchQueue(label: "test.semaphore.bounded", attributes: .concurrent)
        let group = DispatchGroup()
        for _ in 0..<20 {
            #expect(slots.wait(timeout: deadline()) == .success)
            queue.async(group: group) {
                meter.measure { sleepMilliseconds(2) }
                slots.signal()
            }
        }
        #expect(waited(group))
        #expect(meter.maximum <= 2)
        #expect(meter.maximum >= 1)
        // All slots are back.
        #expect(slots.wait(timeout: .now()) == .success)
        #expect(slots.wait(timeout: .now()) == .success)
        slots.signal()
        slots.signal()
    }

    @Test func mutualExclusionWithValueOne() {
        let mutex = DispatchSemaphore(value: 1)
        let meter = OverlapMeter()
        let total = AtomicCounter()
        DispatchQueue.concurrentPerform(iterations: 400) { _ in
            mutex.wait()
            meter.measure { total.increment() }
            mutex.signal()
        }
        #expect(meter.maximum == 1)
        #expect(total.value == 400)
    }
}

/// Pool threads blocked in `wait()` on `semaphore` right now.
func blockedOn(_ semaphore: DispatchSemaphore) -> Int {
    Runtime.shared.scheduler.blockedThreads { reason in
        if case .semaphore(let waitedOn) = reason { return waitedOn === semaphore }
        return false
    }
}
