// The stall watch: runnable work that no thread may take, or a pool whose every
// thread is blocked, is reported on stderr after the grace period — never before,
// never when nothing is pending, and (whether or not other bands are idle) never
// silently. Only a deadlock that no thread outside the pool could end stops the
// process; a wait a semaphore or group could end gets a warning and the process
// keeps waiting. Each test runs in a child process with its own small pool.

import Testing
@testable import Ringlet

/// A pool small enough to block completely: cores 1 × 2 workers (1 high band, 1
/// utility band) + 1 reserve.
private func tinyConfiguration(grace milliseconds: Int) -> RuntimeConfiguration {
    RuntimeConfiguration(cores: 1, workersPerCore: 2, reservePerCore: 1, deadlockGraceMilliseconds: milliseconds)
}

@Suite struct StallReportTests {
    /// Every pool thread waits on a semaphore that pending work would signal. The main
    /// thread could signal it too, so: a warning, then the program goes on.
    @Test func everyThreadBlockedOnASemaphoreIsReportedAndWaitedOut() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StallScenarios.semaphores(grace: 200)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("deadlock report"), "\(text)")
        #expect(text.contains("ringlet-w0") && text.contains("ringlet-r"), "no worker names: \(text)")
        #expect(text.contains("waits on DispatchSemaphore.wait()"), "\(text)")
        #expect(text.contains("queue 'test.deadlock.victim'"), "the queue with pending work is not named: \(text)")
        #expect(text.contains("all 3 pool threads"), "\(text)")
        #expect(text.contains("possible deadlock"), "not reported as a warning: \(text)")
        let reportedAfter = StallScenarios.lastTick(before: "deadlock report", in: text)
        #expect(reportedAfter >= 150, "reported \(reportedAfter) ms after the deadlock, before the 200 ms grace")
    }

    /// Threads wait to sync onto a serial queue whose item waits on a semaphore: the
    /// report names the queue and the waits; the semaphore could still be signalled.
    @Test func workersBlockedInSyncBehindABlockedItem() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StallScenarios.syncChain(grace: 200)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("deadlock report"), "\(text)")
        #expect(text.contains("sync onto queue 'test.deadlock.serial'"), "\(text)")
        #expect(text.contains("running work of queue 'test.deadlock.serial'"), "\(text)")
        #expect(text.contains("queue 'test.deadlock.serial':"), "pending work not listed: \(text)")
        // The report's sections are the live dump's, breadcrumbs included.
        #expect(text.contains("running work of queue 'test.deadlock.serial'; the item was enqueued from "), "\(text)")
    }

    /// Items of two serial queues wait on work items queued on each other's queue, and
    /// the last thread syncs onto one of them: only queued work could end these waits,
    /// and none can run. The process stops.
    @Test func aDeadlockOnlyQueuedWorkCouldEndStopsTheProcess() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            StallScenarios.syncCycle(grace: 200)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("deadlock report"), "\(text)")
        #expect(text.contains("sync onto queue 'test.cycle.a'") && text.contains("DispatchWorkItem.wait()"),
                "\(text)")
        #expect(text.contains("deadlock: all 3 pool threads"), "\(text)")
        #expect(text.contains("'reservePerCore'"), "the key to change is not named: \(text)")
    }

    @Test func reportedWithinTheDefaultGrace() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StallScenarios.semaphores(grace: RuntimeConfiguration(cores: 1).deadlockGraceMilliseconds)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("deadlock report"), "\(text)")
        let reportedAfter = StallScenarios.lastTick(before: "deadlock report", in: text)
        #expect(reportedAfter >= 1900, "reported \(reportedAfter) ms after the deadlock, before the 2 s grace")
    }

    @Test func noReportWhenNothingIsPending() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StallScenarios.blockedWithoutPendingWork(grace: 50)
        }
        let text = result?.standardErrorText ?? ""
        #expect(!text.contains("report"), "a report without pending work: \(text)")
    }

    /// Utility items wait on semaphores that later utility items would signal: the
    /// utility worker and the reserve are blocked, the high band is idle (strict QoS:
    /// it may not run utility work). Reported although not every thread is blocked.
    @Test func aStallInsideOneBandIsReported() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StallScenarios.bandStall(grace: 200)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("stall report: utility work has waited"), "\(text)")
        #expect(text.contains("[utility] waits on DispatchSemaphore.wait()"), "\(text)")
        #expect(text.contains("[high] is parked"), "the idle high band is not shown: \(text)")
        #expect(text.contains("global queue at utility: 1 item(s)"), "\(text)")
        #expect(text.contains("'lowQoSWorkers'"), "the key to change is not named: \(text)")
    }

    /// Items of every band wait for the main thread, which signals them after many
    /// grace periods: a wait a thread outside the pool ends is no deadlock.
    @Test func waitsTheMainThreadEndsAreNeverKilled() async {
        await #expect(processExitsWith: .success) { StallScenarios.mainThreadReleasesEveryBand(grace: 50) }
    }

    /// Long items hold every thread that may run utility work: the report says which
    /// queue's item and for how long.
    @Test func longItemsHoldingTheBandAreNamed() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StallScenarios.busyBand(grace: 200)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("stall report: utility work has waited"), "\(text)")
        #expect(text.contains("runs an item of queue 'test.stall.long'"), "the busy queue is not named: \(text)")
        #expect(text.contains("(for at least"), "\(text)")
    }
}

enum StallScenarios {
    /// Blocks the pool's threads one by one (each wait is covered by the next thread
    /// to be blocked), waiting until the scheduler counts each.
    static func block(_ steps: [() -> Void], alreadyBlocked: Int = 0) -> Bool {
        for (offset, step) in steps.enumerated() {
            let index = alreadyBlocked + offset
            step()
            guard eventually({ blockedThreadCount == index + 1 }) else {
                Issue.record("only \(blockedThreadCount) of \(index + 1) pool threads blocked")
                return false
            }
        }
        return true
    }

    static func semaphores(grace: Int) {
        startRuntime(tinyConfiguration(grace: grace))
        let semaphore = DispatchSemaphore(value: 0)
        let released = DispatchGroup()
        guard block([
            { DispatchQueue.global().async(group: released) { semaphore.wait() } },      // the high-band worker
            { DispatchQueue.global().async(group: released) { semaphore.wait() } },      // the reserve covering it
            { DispatchQueue.global(qos: .utility).async(group: released) { semaphore.wait() } },  // the low band
        ]) else { return }
        // The work that would release them all has no thread left.
        DispatchQueue(label: "test.deadlock.victim").async(group: released) { for _ in 0..<3 { semaphore.signal() } }
        // Until the warning that follows the report: the manager writes it after the
        // report, and a child that went on at the report could exit before it (seen
        // under AddressSanitizer).
        ticks(until: "possible deadlock", atMost: grace + 5000)
        // Not killed: this thread (outside the pool) ends the waits, and all runs.
        for _ in 0..<3 { semaphore.signal() }
        #expect(waited(released))
    }

    /// Writes "tick <ms since now>" to stderr every 10 ms until the runtime has
    /// printed a line containing `marker` (seen through `StallProbe`) or `atMost` ms
    /// pass. The last tick before the report tells when the report came.
    static func ticks(until marker: String, atMost milliseconds: Int) {
        let start = monotonicNanoseconds
        let seen = StallProbe.install(marker)
        while true {
            let elapsed = Int(secondsSince(start) * 1000)
            writeToStandardError("tick \(elapsed)")
            if seen() || elapsed > milliseconds { return }
            sleepMilliseconds(10)
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
        let released = DispatchGroup()
        guard block([
            // The serial queue's item waits on a semaphore only later work signals...
            { serial.async(group: released) { semaphore.wait() } },
            // ...and the other pool threads wait to sync onto that queue.
            { DispatchQueue.global().async(group: released) { serial.sync {} } },
            { DispatchQueue.global(qos: .utility).async(group: released) { serial.sync {} } },
        ]) else { return }
        DispatchQueue.global().async(group: released) { semaphore.signal() }
        ticks(until: "deadlock report", atMost: grace + 5000)
        semaphore.signal()
        #expect(waited(released))
        semaphore.signal()  // the pending item's signal found no waiter: balance it
    }

    static func syncCycle(grace: Int) {
        startRuntime(tinyConfiguration(grace: grace))
        let a = DispatchQueue(label: "test.cycle.a")
        let b = DispatchQueue(label: "test.cycle.b", qos: .utility)  // runs on the utility worker
        let aRunning = Gate(), bRunning = Gate()
        // Both items must run before either waits: they start together and block
        // together, each on a work item queued behind the other. (A cycle of sync calls
        // is named at once instead: SyncCycleTests.)
        let onA = DispatchWorkItem {}, onB = DispatchWorkItem {}
        a.async { aRunning.open(); bRunning.pass(); b.async(execute: onB); onB.wait() }
        b.async { bRunning.open(); aRunning.pass(); a.async(execute: onA); onA.wait() }
        guard eventually({ blockedThreadCount == 2 }) else {
            Issue.record("the two items did not block in their waits")
            return
        }
        guard block([{ DispatchQueue.global().async { a.sync {} } }], alreadyBlocked: 2) else { return }
        ticks(until: "deadlock report", atMost: grace + 5000)
        sleepMilliseconds(5000)  // the report is followed by the stop
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
        // them and no work is pending: that is no deadlock. Stay blocked until the
        // watch has looked many times, then release.
        let watchWakeups = Runtime.statistics.managerWakeups
        #expect(eventually { Runtime.statistics.managerWakeups >= watchWakeups + 10 })
        for _ in 0..<3 { semaphore.signal() }
        #expect(waited(released))
    }

    static func bandStall(grace: Int) {
        // 2 cores: 2 high-band workers, 1 utility, 1 background, 2 reserve.
        startRuntime(twoCoreConfiguration(grace: grace))
        let semaphores = (0..<4).map { _ in DispatchSemaphore(value: 0) }
        let released = DispatchGroup()
        // Item i waits for item i + 1, which signals it first: with unbounded threads
        // they all finish; here three block (utility worker, two reserves) and the
        // fourth cannot run.
        guard block((0..<3).map { index in
            { DispatchQueue.global(qos: .utility).async(group: released) {
                semaphores[index].wait()
                semaphores[max(index - 1, 0)].signal()
            } }
        }) else { return }
        DispatchQueue.global(qos: .utility).async(group: released) { semaphores[2].signal() }
        ticks(until: "stall report", atMost: grace + 5000)
        semaphores[2].signal()  // from outside the pool: the chain unwinds
        #expect(waited(released))
    }

    static func mainThreadReleasesEveryBand(grace: Int) {
        startRuntime(twoCoreConfiguration(grace: grace))
        let semaphore = DispatchSemaphore(value: 0)
        let released = DispatchGroup()
        let levels: [DispatchQoS.QoSClass] = [.userInteractive, .userInitiated, .default, .utility, .background]
        for index in 0..<12 {
            DispatchQueue.global(qos: levels[index % levels.count]).async(group: released) { semaphore.wait() }
        }
        // Many grace periods with every thread blocked (and work pending).
        let watchWakeups = Runtime.statistics.managerWakeups
        #expect(eventually { Runtime.statistics.managerWakeups >= watchWakeups + 20 })
        for _ in 0..<12 { semaphore.signal() }
        #expect(waited(released))
    }

    static func busyBand(grace: Int) {
        startRuntime(twoCoreConfiguration(grace: grace))
        let gate = Gate()
        let long = DispatchQueue(label: "test.stall.long", qos: .utility)
        let started = DispatchSemaphore(value: 0)
        long.async { started.signal(); gate.pass() }  // holds the only utility worker, not blocked
        #expect(waited(started))
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue.global(qos: .utility).async { ran.signal() }
        ticks(until: "stall report", atMost: grace + 5000)
        gate.open()
        #expect(waited(ran))
    }
}
