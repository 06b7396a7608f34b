import Glibc
import CRingletTestSupport
import Synchronization
import Testing
@testable import Ringlet

/// Timer sources on the manager thread's ring.
@Suite struct TimerSourceTests {
    @Test func oneShotFiresOnceNeverEarly() {
        let queue = DispatchQueue(label: "test.timer.once")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let fired = Recorder<(at: UInt64, data: UInt)>()
        let deadline = DispatchTime.now() + .milliseconds(20)
        timer.setEventHandler { fired.append((DispatchTime.now().uptimeNanoseconds, timer.data)) }
        timer.schedule(deadline: deadline)
        timer.activate()
        #expect(eventually { fired.count == 1 })
        // Nothing is armed for it any more, and any delivery queued has run.
        #expect(timerIsDisarmed(timer))
        settle(queue)
        #expect(fired.count == 1)
        #expect((fired.values.first?.at ?? 0) >= deadline.uptimeNanoseconds)
        #expect(fired.values.first?.data == 1)
        timer.cancel()
    }

    @Test func repeatingKeepsItsPhase() {
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: DispatchQueue(label: "test.timer.phase"))
        let fired = Recorder<UInt64>()
        let start = DispatchTime.now() + .milliseconds(10)
        timer.setEventHandler { fired.append(DispatchTime.now().uptimeNanoseconds) }
        timer.schedule(deadline: start, repeating: .milliseconds(10), leeway: .milliseconds(1))
        timer.activate()
        #expect(eventually { fired.count >= 10 })
        timer.cancel()
        // Fire k never comes before start + k·10 ms: the deadlines stay on the phase.
        for (k, at) in fired.values.prefix(10).enumerated() {
            #expect(at >= start.uptimeNanoseconds + UInt64(k) * 10_000_000)
        }
    }

    /// A strict timer with no leeway is staged (TimerQueue): the manager hands each
    /// fire to a worker 300 µs ahead, and the worker sleeps out the rest — so the
    /// statistics count staged fires, and no handler ever starts before the deadline
    /// of the last fire its `data` covers.
    @Test func aStrictTimerIsHandedOverAheadAndStillNeverEarly() {
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: DispatchQueue(label: "test.timer.staged"))
        let fired = Recorder<(at: UInt64, fires: UInt)>()
        let interval: UInt64 = 10_000_000
        let start = DispatchTime.now() + .milliseconds(10)
        let stagedBefore = Runtime.shared.statistics.strictTimerFiresStaged
        nonisolated(unsafe) var fires: UInt = 0  // only in the handler (serial)
        timer.setEventHandler {
            fires += timer.data
            fired.append((DispatchTime.now().uptimeNanoseconds, fires))
        }
        timer.schedule(deadline: start, repeating: .nanoseconds(Int(interval)), leeway: .nanoseconds(0))
        timer.activate()
        #expect(eventually { fired.count >= 10 })
        // A fire is staged when the manager reaches it before its deadline; on a loaded
        // machine (CI, under a sanitizer) it can wake later than the advance many times
        // in a row, so the timer goes on until one was.
        #expect(eventually { Runtime.shared.statistics.strictTimerFiresStaged > stagedBefore })
        timer.cancel()
        for (at, fires) in fired.values {
            #expect(at >= start.uptimeNanoseconds + UInt64(fires - 1) * interval, "fire \(fires) came early")
        }
    }

    /// The staged fire's precise sleep (`MonotonicClock.sleep(until:)`) sets the
    /// thread's timer slack to 1 ns and then back to the thread's default.
    @Test func aPreciseSleepGivesTheThreadItsDefaultTimerSlackBack() {
        #expect(rl_test_set_timer_slack_ns(0) == 0)
        let slack = rl_test_timer_slack_ns()
        #expect(slack > 1, "the thread's default timer slack is \(slack) ns")
        let deadline = MonotonicClock.nanoseconds + 1_000_000
        MonotonicClock.sleep(until: deadline)
        #expect(MonotonicClock.nanoseconds >= deadline)
        #expect(rl_test_timer_slack_ns() == slack, "the sleep left the thread's timer slack at \(rl_test_timer_slack_ns()) ns")
    }

    @Test func suspendedTimerCountsMissedFiresInData() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "test.timer.suspended"))
        let source = timer as! DispatchSource
        let total = AtomicCounter()
        let handlerRuns = AtomicCounter()
        timer.setEventHandler {
            total.increment(by: Int(timer.data))
            handlerRuns.increment()
        }
        timer.schedule(deadline: .now() + .milliseconds(5), repeating: .milliseconds(5), leeway: .milliseconds(1))
        timer.activate()
        #expect(eventually { handlerRuns.value >= 1 })
        timer.suspend()
        let runsBefore = handlerRuns.value
        let totalBefore = total.value
        // About 20 fires pile up in the pending data while suspended.
        #expect(eventually { source.pending.load(ordering: .acquiring) >= 20 })
        #expect(handlerRuns.value <= runsBefore + 1)  // one delivery may have been running
        timer.resume()
        #expect(eventually { total.value - totalBefore >= 15 })
        // The missed fires came as few deliveries with large `data`, not one each.
        #expect(handlerRuns.value - runsBefore < 10)
        timer.cancel()
    }

    @Test func cancelHandlerRunsOnceAfterTheLastEventHandler() {
        let queue = DispatchQueue(label: "test.timer.cancel", attributes: .concurrent)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let log = Recorder<String>()
        let inside = AtomicCounter()
        let overlapped = AtomicCounter()
        timer.setEventHandler {
            if inside.increment() > 1 { overlapped.increment() }
            log.append("event")
            sleepMilliseconds(2)
            inside.decrement()
        }
        timer.setCancelHandler { log.append("cancel") }
        timer.schedule(deadline: .now(), repeating: .milliseconds(1))
        timer.activate()
        #expect(eventually { log.count >= 5 })
        timer.cancel()
        #expect(timer.isCancelled)
        #expect(eventually { log.values.last == "cancel" })
        #expect(timerIsDisarmed(timer))
        settle(queue)
        #expect(log.values.filter { $0 == "cancel" }.count == 1)
        #expect(log.values.last == "cancel")
        #expect(overlapped.value == 0)  // never concurrent with itself, even on a concurrent queue
    }

    @Test func rescheduleReplacesTheSchedule() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "test.timer.reschedule"))
        let fired = Recorder<UInt64>()
        timer.setEventHandler { fired.append(DispatchTime.now().uptimeNanoseconds) }
        timer.schedule(deadline: .now() + .seconds(30))
        timer.activate()
        let soon = DispatchTime.now() + .milliseconds(10)
        timer.schedule(deadline: soon)
        #expect(eventually { fired.count == 1 })
        #expect((fired.values.first ?? 0) >= soon.uptimeNanoseconds)
        timer.cancel()
    }

    /// A schedule set just after `activate()` may be armed by the registration itself;
    /// its `.reschedule` request, taken after that one-shot fired, arms nothing again.
    @Test func aScheduleTheRegistrationAppliedFiresOnce() {
        let queue = DispatchQueue(label: "test.timer.applied")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let fired = AtomicCounter()
        timer.setEventHandler { fired.increment() }
        timer.schedule(deadline: .now() + .seconds(30))
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        // The manager takes, in this order: the registration (which reads the newest
        // schedule, due now), a wait for that fire, then the schedule's own request.
        let requestsQueued = DispatchSemaphore(value: 0)
        let firedInTheWindow = Atomic<Bool>(false)
        manager.submit(.run { _ in _ = requestsQueued.wait(timeout: .now() + .seconds(10)) })
        timer.activate()
        manager.submit(.run { _ in
            // Not `eventually`, whose report would ask this thread for a dump.
            let start = monotonicNanoseconds
            while fired.value == 0 && secondsSince(start) < 10 { usleep(1_000) }
            firedInTheWindow.store(fired.value >= 1, ordering: .relaxed)
        })
        timer.schedule(deadline: .now())
        requestsQueued.signal()
        #expect(eventually { fired.value >= 1 })
        #expect(timerIsDisarmed(timer))
        settle(queue)
        let inTheWindow = firedInTheWindow.load(ordering: .relaxed)
        #expect(inTheWindow, "the fire came after the request: the order was not tested")
        #expect(fired.value == 1)
        timer.cancel()
    }

    @Test func neverScheduledOrDistantFutureNeverFires() {
        let queue = DispatchQueue(label: "test.timer.never")
        let a = DispatchSource.makeTimerSource(queue: queue)
        let b = DispatchSource.makeTimerSource(queue: queue)
        let fired = AtomicCounter()
        a.setEventHandler { fired.increment() }
        b.setEventHandler { fired.increment() }
        b.schedule(deadline: .distantFuture)
        a.activate()
        b.activate()
        let cancelled = DispatchGroup()
        for timer in [a, b] {
            cancelled.enter()
            timer.setCancelHandler { cancelled.leave() }
        }
        // Both are registered and neither has a deadline armed: nothing can fire.
        let sources = [a, b].map { $0 as! DispatchSource }  // the concrete class is Sendable
        #expect(onManager { sources.allSatisfy { $0.registration.registered } } == true)
        #expect(timerIsDisarmed(a) && timerIsDisarmed(b))
        settle(queue)
        a.cancel()
        b.cancel()
        #expect(waited(cancelled))
        #expect(fired.value == 0)
    }

    @Test func twoThousandOneShotTimerSourcesAllFire() {
        let queue = DispatchQueue(label: "test.timer.many", attributes: .concurrent)
        let counts = (0..<2_000).map { _ in AtomicCounter() }
        var timers: [DispatchSourceTimer] = []
        let start = DispatchTime.now()
        for (index, count) in counts.enumerated() {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { count.increment() }
            timer.schedule(deadline: start + .microseconds(50 * (index % 400)))
            timer.activate()
            timers.append(timer)
        }
        #expect(eventually { counts.allSatisfy { $0.value >= 1 } })
        #expect(timers.allSatisfy { timerIsDisarmed($0) })
        settle(queue)
        #expect(counts.allSatisfy { $0.value == 1 })
        for timer in timers { timer.cancel() }
    }

    @Test func wallClockTimerFollowsAClockChange() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "test.timer.wall"))
        let fired = AtomicCounter()
        timer.setEventHandler { fired.increment() }
        timer.schedule(wallDeadline: .now() + .seconds(60))
        timer.activate()
        // Armed in the manager, a minute away.
        let source = timer as! DispatchSource
        #expect(eventually {
            onManager { source.registration.timer.flatMap { RuntimeParts.shared.manager.takeUnretainedValue()
                .timers.deadline(of: $0) } }.flatMap { $0 }.map { $0 > MonotonicClock.nanoseconds + 50_000_000_000 }
                ?? false
        })
        #expect(fired.value == 0)
        // Someone sets the clock 60 s forward (an NTP sync on a board without RTC).
        WallClock.offsetHook.install { _ in 60_000_000_000 }
        defer { WallClock.offsetHook.install(nil) }
        RuntimeParts.shared.manager.takeUnretainedValue().submit(.wallClockChanged)
        #expect(eventually(within: 5) { fired.value == 1 })
        timer.cancel()
    }

    @Test func registrationHandlerRunsBeforeTheFirstEvent() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "test.timer.registration"))
        let log = Recorder<String>()
        timer.setRegistrationHandler { log.append("registered") }
        timer.setEventHandler { log.append("event") }
        timer.schedule(deadline: .now())
        timer.activate()
        #expect(eventually { log.count == 2 })
        #expect(log.values == ["registered", "event"])
        timer.cancel()
    }
}
