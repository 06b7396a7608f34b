// Task.sleep as windows in the manager's timers: never early, no thread and no source
// per sleep, and a cancelled sleeper wakes at once with its window removed.

import Testing
@testable import Ringlet

@Suite struct ConcurrencySleepTests {
    @Test func sleepsNeverEndEarlyAndAreTimerWindows() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let before = processThreadIDs()
                let early = Recorder<String>()
                let armedPeak = Peak(0)
                await withTaskGroup(of: Void.self) { group in
                    for index in 0..<200 {
                        group.addTask {
                            let milliseconds = 100 + index % 40
                            let clock = ContinuousClock()
                            let start = clock.now
                            switch index % 4 {
                            case 0: try? await Task.sleep(for: .milliseconds(milliseconds))
                            case 1: try? await Task.sleep(for: .milliseconds(milliseconds), tolerance: .milliseconds(2))
                            case 2: try? await Task.sleep(nanoseconds: UInt64(milliseconds) * 1_000_000)
                            default:
                                try? await Task.sleep(until: SuspendingClock.now + .milliseconds(milliseconds),
                                                      clock: .suspending)
                            }
                            let slept = clock.now - start
                            if slept < .milliseconds(milliseconds) { early.append("\(slept) < \(milliseconds) ms") }
                        }
                    }
                    // While they sleep (100-139 ms): windows in the manager's timers. Polled
                    // by awaiting, not by blocking one of the pool's two workers (CI saw a
                    // blocking poller find only 1 window in 10 s).
                    for _ in 0..<2000 {
                        let armed = ConcurrencySleepTests.armedTimers
                        armedPeak.raise(to: armed)
                        if armed >= 20 { break }
                        try? await Task.sleep(for: .milliseconds(5))
                    }
                }
                let added = threadsAdded(since: before)
                if !early.values.isEmpty { return "sleeps ended early: \(early.values.prefix(5))" }
                if armedPeak.value < 20 { return "only \(armedPeak.value) timers armed while 200 tasks slept" }
                return added == 0 ? nil : "\(added) threads appeared while tasks slept"
            }
        }
    }

    /// Timer windows armed now (the manager's count, without the /proc reads of
    /// `Runtime.statistics`, so that 200 tasks can read it as they start).
    static var armedTimers: Int { RuntimeParts.shared.manager.takeUnretainedValue().counters.armedTimers }

    /// Swift concurrency jobs that have returned (the counters' sum, without the /proc
    /// reads of `Runtime.statistics`, for polling every millisecond).
    static var jobsRun: Int { CounterRegistry.shared.totals().jobs.ran }

    /// Windows armed now whose deadline is more than 30 s away: a minute-long sleep's.
    /// Counted by deadline, not against a baseline of all timers: the runtime's own
    /// ticks (the stall watch's) come and go meanwhile.
    static var minuteWindows: Int {
        onManager {
            let later = MonotonicClock.nanoseconds + 30_000_000_000
            return RuntimeParts.shared.manager.takeUnretainedValue().timers.armedEntries()
                .filter { $0.deadline > later }.count
        } ?? -1
    }

    /// A task sleeping for a minute, cancelled once it is suspended in the sleep: it
    /// throws CancellationError at once, and its window leaves the timer structure (no
    /// wake-up a minute later). Cancelled only after the sleeper's job has returned: a
    /// sleeper cancelled in the instant between arming its window and suspending is
    /// resumed by the toolchain without an enqueue, which no executor sees, so it keeps
    /// its window until the window is reached (SleepWindows.swift). Cancelled as soon
    /// as the window was armed, this test met that case about once in a hundred runs
    /// on a loaded machine ("the window stayed armed").
    @Test func cancellationWakesTheSleeperAndRemovesItsWindow() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let jobsBefore = ConcurrencySleepTests.jobsRun
                let sleeper = Task.detached { () -> Bool in
                    do {
                        try await Task.sleep(for: .seconds(60))
                        return false
                    } catch {
                        return error is CancellationError
                    }
                }
                // The window is armed and the sleeper's job has returned, suspended in the
                // sleep: this scenario's own job is still running, so the sleeper's is
                // the only one that can have ended.
                guard eventually(within: 5, {
                    ConcurrencySleepTests.minuteWindows == 1 && ConcurrencySleepTests.jobsRun > jobsBefore
                }) else {
                    return "the sleep never armed a window and suspended (\(ConcurrencySleepTests.minuteWindows) "
                        + "minute-long window(s), \(ConcurrencySleepTests.jobsRun - jobsBefore) job(s) returned)"
                }
                let start = monotonicNanoseconds
                sleeper.cancel()
                let threw = await sleeper.value
                let took = secondsSince(start)
                if !threw { return "the cancelled sleep did not throw CancellationError" }
                if took > 1 { return "the cancelled sleeper took \(took) s to wake" }
                let removed = eventually(within: 5) { ConcurrencySleepTests.minuteWindows == 0 }
                return removed ? nil : "the window stayed armed (\(ConcurrencySleepTests.minuteWindows) minute-long)"
            }
        }
    }
}
