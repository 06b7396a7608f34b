// A cycle of sync calls — thread 1 in an item of serial queue A syncs onto B while
// thread 2 in an item of B syncs onto A — can never end: Ringlet traps naming both
// threads and queues (it used to hang without a word). Syncs that only wait for
// each other in a line, without a cycle, still finish.

import Testing
@testable import Ringlet

@Suite struct SyncCycleTests {
    @Test func anABBASyncBetweenTwoSerialQueuesTrapsNamingBoth() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            SyncCycleScenarios.abba(throughTargets: false)
        }
        let text = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(text.contains("deadlock: a cycle of sync calls"), "stderr: \(text.suffix(2000))")
        #expect(text.contains("holds queue 'test.cycle.a' and waits in sync onto queue 'test.cycle.b'"))
        #expect(text.contains("holds queue 'test.cycle.b' and waits in sync onto queue 'test.cycle.a'"))
    }

    /// The same cycle where each item runs on a child of the queue the other needs.
    @Test func aCycleThroughTargetQueuesTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            SyncCycleScenarios.abba(throughTargets: true)
        }
        let text = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(text.contains("deadlock: a cycle of sync calls"), "stderr: \(text.suffix(2000))")
    }

    /// Two threads sync onto a queue the other's item holds only in a line: the
    /// holder finishes, and both return.
    @Test func syncsWaitingInALineStillFinish() async {
        await #expect(processExitsWith: .success) { SyncCycleScenarios.line() }
    }
}

enum SyncCycleScenarios {
    /// Both items start, each then syncs onto the other's queue (or a child of it).
    static func abba(throughTargets: Bool) {
        startRuntime(twoCoreConfiguration())
        let a = DispatchQueue(label: "test.cycle.a")
        let b = DispatchQueue(label: "test.cycle.b")
        let runA = throughTargets ? DispatchQueue(label: "test.cycle.a-child", target: a) : a
        let runB = throughTargets ? DispatchQueue(label: "test.cycle.b-child", target: b) : b
        let bothIn = DispatchGroup()
        bothIn.enter()
        bothIn.enter()
        runA.async {
            bothIn.leave()
            _ = bothIn.wait(timeout: .now() + 30)
            b.sync {}
        }
        runB.async {
            bothIn.leave()
            _ = bothIn.wait(timeout: .now() + 30)
            a.sync {}
        }
        // Not reached: the trap ends the process.
        sleepMilliseconds(30_000)
    }

    static func line() {
        startRuntime(twoCoreConfiguration())
        let a = DispatchQueue(label: "test.line.a")
        let b = DispatchQueue(label: "test.line.b")
        let aHeld = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        a.async(group: done) {
            aHeld.signal()
            _ = release.wait(timeout: .now() + 30)
        }
        #expect(waited(aHeld))
        // b's item waits for a, which waits for nothing that b holds.
        b.async(group: done) { a.sync {} }
        #expect(eventually { a.pendingCount == 1 })
        release.signal()
        #expect(waited(done))
    }
}
