// The deadlock report: when every pool thread is blocked in a Ringlet wait while work
// is pending, the runtime prints which thread waits on what and which queues hold
// work, then traps — after the grace period, not before, and never when nothing is
// pending. Each test runs in a child process on a 3-thread pool (1 high-band worker,
// 1 utility worker, 1 reserve).

import Testing
@testable import Ringlet

/// A pool small enough to block completely: cores 1 × 2 workers + 1 reserve.
private func tinyConfiguration(grace milliseconds: Int) -> RuntimeConfiguration {
    RuntimeConfiguration(cores: 1, workersPerCore: 2, reservePerCore: 1, deadlockGraceMilliseconds: milliseconds)
}

@Suite struct DeadlockReportTests {
    @Test func everyThreadBlockedOnASemaphore() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            DeadlockScenarios.semaphores(grace: 200)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("deadlock report"), "\(text)")
        #expect(text.contains("ringlet-w0") && text.contains("ringlet-r"), "no worker names: \(text)")
        #expect(text.contains("waits on DispatchSemaphore.wait()"), "\(text)")
        #expect(text.contains("queue 'test.deadlock.victim'"), "the queue with pending work is not named: \(text)")
        #expect(text.contains("all 3 pool threads"), "\(text)")
        let reportedAfter = DeadlockScenarios.lastTick(before: "deadlock report", in: text)
        #expect(reportedAfter >= 150, "reported \(reportedAfter) ms after the deadlock, before the 200 ms grace")
    }

    @Test func workersBlockedInSyncBehindABlockedItem() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            DeadlockScenarios.syncChain(grace: 200)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("deadlock report"), "\(text)")
        #expect(text.contains("sync onto queue 'test.deadlock.serial'"), "\(text)")
        #expect(text.contains("running work of queue 'test.deadlock.serial'"), "\(text)")
        #expect(text.contains("queue 'test.deadlock.serial':"), "pending work not listed: \(text)")
    }

    @Test func reportedWithinTheDefaultGrace() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            DeadlockScenarios.semaphores(grace: RuntimeConfiguration(cores: 1).deadlockGraceMilliseconds)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("deadlock report"), "\(text)")
        let reportedAfter = DeadlockScenarios.lastTick(before: "deadlock report", in: text)
        #expect(reportedAfter >= 1900, "reported \(reportedAfter) ms after the deadlock, before the 2 s grace")
    }

    @Test func noReportWhenNothingIsPending() async {
        await #expect(processExitsWith: .success) { DeadlockScenarios.blockedWithoutPendingWork(grace: 50) }
    }
}

enum DeadlockScenarios {
    /// Blocks the pool's threads one by one (each wait is covered by the next thread
    /// to be blocked), waiting until the scheduler counts each.
    static func block(_ steps: [() -> Void]) -> Bool {
        for (index, step) in steps.enumerated() {
            step()
            guard eventually({ Runtime.statistics.blockedThreads == index + 1 }) else {
                Issue.record("only \(Runtime.statistics.blockedThreads) of \(index + 1) pool threads blocked")
                return false
            }
        }
        return true
    }

    static func semaphores(grace: Int) {
        let configuration = tinyConfiguration(grace: grace)
        startRuntime(configuration)
        let semaphore = DispatchSemaphore(value: 0)
        guard block([
            { DispatchQueue.global().async { semaphore.wait() } },          // the high-band worker
            { DispatchQueue.global().async { semaphore.wait() } },          // the reserve covering it
            { DispatchQueue.global(qos: .utility).async { semaphore.wait() } },  // the low-band worker
        ]) else { return }
        // The work that would release them all has no thread left.
        DispatchQueue(label: "test.deadlock.victim").async { for _ in 0..<3 { semaphore.signal() } }
        ticks(for: grace + 3000)
    }

    /// Writes "tick <ms since now>" to stderr every 20 ms for `milliseconds`, then
    /// returns — a normal exit, which fails a test that expects the runtime to stop
    /// the process. The last tick before the report tells when the report came.
    static func ticks(for milliseconds: Int) {
        let start = monotonicNanoseconds
        while true {
            let elapsed = Int(secondsSince(start) * 1000)
            writeToStandardError("tick \(elapsed)")
            if elapsed > milliseconds { return }
            sleepMilliseconds(20)
        }
    }

    /// The milliseconds of the last "tick" line before `marker` in `text` (-1: none).
    static func lastTick(before marker: String, in text: String) -> Int {
        var last = -1
        for line in text.split(separator: "\n") {
            if line.contains(marker) { return last }
            if line.hasPrefix("tick "), let value = Int(line.dropFirst(5)) { last = value }
        }
        return -1
    }

    static func syncChain(grace: Int) {
        startRuntime(tinyConfiguration(grace: grace))
        let serial = DispatchQueue(label: "test.deadlock.serial")
        let semaphore = DispatchSemaphore(value: 0)
        guard block([
            // The serial queue's item waits on a semaphore only later work signals...
            { serial.async { semaphore.wait() } },
            // ...and the other pool threads wait to sync onto that queue.
            { DispatchQueue.global().async { serial.sync {} } },
            { DispatchQueue.global(qos: .utility).async { serial.sync {} } },
        ]) else { return }
        DispatchQueue.global().async { semaphore.signal() }
        ticks(for: grace + 3000)
    }

    static func blockedWithoutPendingWork(grace: Int) {
        startRuntime(tinyConfiguration(grace: grace))
        let semaphore = DispatchSemaphore(value: 0)
        let released = DispatchGroup()
        guard block([
            { DispatchQueue.global().async(group: released) { semaphore.wait() } },
            { DispatchQueue.global().async(group: released) { semaphore.wait() } },
            { DispatchQueue.global(qos: .utility).async(group: released) { semaphore.wait() } },
        ]) else { return }
        // Every pool thread is blocked, but only this (non-pool) thread can release
        // them and no work is pending: that is no deadlock. Stay blocked for many
        // grace periods, then release.
        sleepMilliseconds(10 * grace)
        for _ in 0..<3 { semaphore.signal() }
        #expect(waited(released))
    }
}
