// The main thread, having run the main queue dry, watches for the next item before it
// parks while the items come back to back (a task's hops to the main actor), and does
// not once they come slowly (MainThreadWatch.swift).
import Synchronization
import Testing
@testable import Ringlet

@Suite struct MainThreadWatchTests {
    @Test func aShortGapTurnsWatchingOnAndALongOneOff() {
        var watch = MainThreadWatch(spinMicroseconds: 5, cores: 2)
        #expect(watch.limitNanoseconds == 50_000)
        #expect(watch.watchNanoseconds == 0, "a fresh main thread watched before any gap was seen")
        watch.idleEnded(idleStart: 1_000_000, posted: 1_030_000)
        #expect(watch.watchNanoseconds == 50_000, "a 30 µs gap did not turn watching on")
        watch.idleEnded(idleStart: 2_000_000, posted: 2_050_001)
        #expect(watch.watchNanoseconds == 0, "a gap just over the limit left watching on")
        watch.idleEnded(idleStart: 3_000_000, posted: 2_999_000)
        #expect(watch.watchNanoseconds == 50_000, "a token posted before the idle time began is a gap of 0")
    }

    @Test func oneCoreOrNoSpinNeverWatches() {
        for (spin, cores) in [(5, 1), (0, 4)] {
            var watch = MainThreadWatch(spinMicroseconds: spin, cores: cores)
            watch.idleEnded(idleStart: 1_000, posted: 1_001)
            #expect(watch.watchNanoseconds == 0, "spinMicroseconds \(spin) on \(cores) cores watched")
        }
    }

    @Test func backToBackItemsAreCaughtAndSlowOnesAreNotWatchedFor() async {
        await #expect(processExitsWith: .success) { MainThreadWatchScenarios.backToBackThenSlow() }
    }
}

enum MainThreadWatchScenarios {
    final class Log: Sendable {
        let ran = Atomic<Int>(0)
        let caught = Atomic<Int>(-1)
        let slowWatches = Atomic<Int>(-1)
        let failure = Mutex<String?>(nil)
    }

    /// A pool thread feeds the main queue one item at a time, the next soon after the
    /// last ran, until the main thread's watches caught 20 (at most 2,000 items); then
    /// 10 items each 30 ms after the last ran. This thread drains the main queue as the
    /// main thread does in `dispatchMain()`.
    ///
    /// `spinMicroseconds` is its largest, 1,000 (a watch of 10 ms), so that the two
    /// threads meet within a watch even when the suite's other processes keep both
    /// cores busy: at 5 µs (a 50 µs watch) they hardly ever did.
    static func backToBackThenSlow() {
        var configuration = twoCoreConfiguration()
        configuration.spinMicroseconds = 1000
        startRuntime(configuration)
        let log = Log()
        let main = DispatchQueue.main
        let watcher = MainThread.shared
        DispatchQueue.global().async {
            defer { watcher.stop() }
            func push() -> Bool {
                let expected = log.ran.load(ordering: .relaxed) + 1
                main.async { log.ran.wrappingAdd(1, ordering: .relaxed) }
                let deadline = MonotonicClock.nanoseconds + 10_000_000_000
                while log.ran.load(ordering: .relaxed) < expected {
                    if MonotonicClock.nanoseconds > deadline {
                        log.failure.withLock { $0 = "main-queue item \(expected) did not run within 10 s" }
                        return false
                    }
                }
                return true
            }
            // Each item is pushed once the main thread has begun to watch, or 2 ms after
            // the last one ran when it does not: well inside the 10 ms watch, so a short
            // gap turns watching on.
            let caughtBefore = watcher.watchesCaught
            for _ in 0..<2000 {
                let watchesSeen = watcher.watches
                let latest = MonotonicClock.nanoseconds + 2_000_000
                while watcher.watches == watchesSeen && MonotonicClock.nanoseconds < latest {}
                guard push() else { return }
                if watcher.watchesCaught - caughtBefore >= 20 { break }
            }
            log.caught.store(watcher.watchesCaught - caughtBefore, ordering: .relaxed)
            let watchesBefore = watcher.watches
            for _ in 0..<10 {
                MonotonicClock.sleep(until: MonotonicClock.nanoseconds + 30_000_000)
                guard push() else { return }
            }
            log.slowWatches.store(watcher.watches - watchesBefore, ordering: .relaxed)
        }
        watcher.drain(until: { false })

        if let failure = log.failure.withLock({ $0 }) { Issue.record("\(failure)"); return }
        let caught = log.caught.load(ordering: .relaxed)
        #expect(caught >= 1, "the main thread's watches caught \(caught) of up to 2,000 back-to-back items")
        // One fruitless watch after the back-to-back items is expected; more only when the
        // main thread was preempted for 30 ms between running an item and going idle.
        let slow = log.slowWatches.load(ordering: .relaxed)
        #expect(slow <= 3, "the main thread watched \(slow) times for 10 items 30 ms apart")
    }
}
