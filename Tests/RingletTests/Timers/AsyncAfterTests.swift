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

    // MARK: Timer requests that need not wake the manager (ManagerThread.submit(_:neededBy:))

    /// An `asyncAfter` whose window the manager will reach anyway — it sleeps until an
    /// earlier timer's aim — is left for that wake-up instead of waking the manager,
    /// and still runs, never early. (Other tests may wake the manager between the look
    /// and the submission, so it tries up to 50 times.)
    @Test func aLaterTimerWaitsForTheManagersNextWakeUp() {
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let early = DispatchWorkItem {}
        let queue = DispatchQueue(label: "test.after.quiet")
        queue.asyncAfter(deadline: .now() + .seconds(1), execute: early)
        let ranLate = Recorder<(deadline: UInt64, at: UInt64)>()
        var quiet = false
        var submitted = 0
        for _ in 0..<50 where !quiet {
            let deadline = DispatchTime.now() + .milliseconds(1_500)
            let aim = TimerQueue.aim(deadline: deadline.uptimeNanoseconds, leeway: manager.leewayForAfter(
                delay: 1_500_000_000, level: .default))
            #expect(eventually { manager.announcedSleep.asleep && manager.announcedSleep.until <= aim })
            let before = manager.quietSubmissions.load(ordering: .relaxed)
            queue.asyncAfter(deadline: deadline) {
                ranLate.append((deadline.uptimeNanoseconds, DispatchTime.now().uptimeNanoseconds))
            }
            submitted += 1
            quiet = manager.quietSubmissions.load(ordering: .relaxed) > before
        }
        #expect(quiet, "every submission woke the manager")
        early.cancel()
        #expect(eventually(within: 30) { ranLate.count == submitted })
        for run in ranLate.values { #expect(run.at >= run.deadline) }
    }

    /// A timer due before the manager's sleep ends wakes it: it runs long before the
    /// timer the manager was sleeping for.
    @Test func anEarlierTimerWakesTheManager() {
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let later = DispatchWorkItem {}
        let queue = DispatchQueue(label: "test.after.eager")
        let laterDeadline = DispatchTime.now() + .seconds(10)
        queue.asyncAfter(deadline: laterDeadline, execute: later)
        #expect(eventually { manager.announcedSleep.asleep })
        let ran = DispatchSemaphore(value: 0)
        let ranAt = Recorder<UInt64>()
        queue.asyncAfter(deadline: .now() + .milliseconds(20)) {
            ranAt.append(DispatchTime.now().uptimeNanoseconds)
            ran.signal()
        }
        #expect(waited(ran))
        later.cancel()
        #expect((ranAt.values.first ?? .max) < laterDeadline.uptimeNanoseconds)
    }
}
