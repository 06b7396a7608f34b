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
                            let milliseconds = 5 + index % 40
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
                    // While they sleep: windows in the manager's timers. The peak is the
                    // count the condition saw: read again after it, on a loaded machine,
                    // every sleep (5-44 ms) may already have ended.
                    _ = eventually {
                        let armed = Runtime.statistics.timersArmed
                        armedPeak.raise(to: armed)
                        return armed >= 20
                    }
                }
                let added = threadsAdded(since: before)
                if !early.values.isEmpty { return "sleeps ended early: \(early.values.prefix(5))" }
                if armedPeak.value < 20 { return "only \(armedPeak.value) timers armed while 200 tasks slept" }
                return added == 0 ? nil : "\(added) threads appeared while tasks slept"
            }
        }
    }

    /// A task sleeping for a minute, cancelled: it throws CancellationError at once,
    /// and its window leaves the timer structure (no wake-up a minute later).
    @Test func cancellationWakesTheSleeperAndRemovesItsWindow() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let baseline = Runtime.statistics.timersArmed
                let sleeper = Task.detached { () -> Bool in
                    do {
                        try await Task.sleep(for: .seconds(60))
                        return false
                    } catch {
                        return error is CancellationError
                    }
                }
                guard eventually(within: 5, { Runtime.statistics.timersArmed > baseline }) else {
                    return "the sleep never armed a window"
                }
                let start = monotonicNanoseconds
                sleeper.cancel()
                let threw = await sleeper.value
                let took = secondsSince(start)
                if !threw { return "the cancelled sleep did not throw CancellationError" }
                if took > 1 { return "the cancelled sleeper took \(took) s to wake" }
                let removed = eventually(within: 5) { Runtime.statistics.timersArmed == baseline }
                return removed ? nil : "the window stayed armed (\(Runtime.statistics.timersArmed) timers)"
            }
        }
    }
}
