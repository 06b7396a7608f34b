import Testing
@testable import Ringlet

/// `asyncAfter` through the manager thread's timers, on a real ring.
@Suite struct AsyncAfterTests {
    @Test func runsAfterTheDeadlineNeverBefore() {
        let queue = DispatchQueue(label: "test.after.deadline")
        let done = DispatchSemaphore(value: 0)
        let ranAt = Recorder<UInt64>()
        let deadline = DispatchTime.now() + .milliseconds(30)
        queue.asyncAfter(deadline: deadline) {
            ranAt.append(DispatchTime.now().uptimeNanoseconds)
            done.signal()
        }
        #expect(waited(done))
        #expect(ranAt.values.count == 1)
        #expect((ranAt.values.first ?? 0) >= deadline.uptimeNanoseconds)
    }

    @Test func itemsRunInDeadlineOrderOnASerialQueue() {
        let queue = DispatchQueue(label: "test.after.order")
        let order = Recorder<Int>()
        let group = DispatchGroup()
        let start = DispatchTime.now()
        // Deadlines 20 ms apart: more than the 10% leeway of any of them.
        for (index, delay) in [80, 20, 60, 40].enumerated() {
            group.enter()
            queue.asyncAfter(deadline: start + .milliseconds(delay)) {
                order.append(index)
                group.leave()
            }
        }
        #expect(waited(group))
        #expect(order.values == [1, 3, 2, 0])
    }

    @Test func twoThousandOneShotsAllRunOnce() {
        let counts = (0..<2_000).map { _ in AtomicCounter() }
        let group = DispatchGroup()
        let start = DispatchTime.now()
        for index in 0..<2_000 {
            group.enter()
            DispatchQueue.global().asyncAfter(deadline: start + .milliseconds(index % 50)) {
                counts[index].increment()
                group.leave()
            }
        }
        #expect(waited(group))
        #expect(counts.allSatisfy { $0.value == 1 })
    }

    @Test func aPastDeadlineRunsAtOnce() {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() - .seconds(1)) { done.signal() }
        #expect(waited(done))
    }

    @Test func workItemsAndWallDeadlines() {
        let done = DispatchGroup()
        let ran = AtomicCounter()
        let item = DispatchWorkItem { ran.increment() }
        done.enter()
        item.notify(queue: .global()) { done.leave() }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5), execute: item)
        done.enter()
        DispatchQueue.global().asyncAfter(wallDeadline: .now() + .milliseconds(5)) {
            ran.increment()
            done.leave()
        }
        let cancelled = DispatchWorkItem { ran.increment() }
        cancelled.cancel()
        DispatchQueue.global().asyncAfter(wallDeadline: .now() + .milliseconds(5), execute: cancelled)
        #expect(waited(done))
        #expect(cancelled.wait(timeout: .now() + 10) == .success)
        #expect(ran.value == 2)
    }

    @Test func theQoSGivenIsTheQoSItRunsAt() {
        let done = DispatchSemaphore(value: 0)
        let seen = Recorder<QoSLevel>()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1), qos: .userInitiated) {
            seen.append(ThreadContext.current.currentPriority.level)
            done.signal()
        }
        #expect(waited(done))
        #expect(seen.values == [.userInitiated])
    }

    @Test func leewayFollowsGCDAndTheQoSPolicy() {
        let manager = Runtime.current.manager
        let ms: UInt64 = 1_000_000
        #expect(manager.leewayForAfter(delay: 100 * ms, level: .default) == 10 * ms)
        #expect(manager.leewayForAfter(delay: 1 * ms, level: .default) == 1 * ms)
        #expect(manager.leewayForAfter(delay: 3_600_000 * ms, level: .default) == 60_000 * ms)
        // Background: at least 10% of the delay (the policy), which GCD's rule already gives.
        #expect(manager.leewayForAfter(delay: 100 * ms, level: .background) == 10 * ms)
    }
}
