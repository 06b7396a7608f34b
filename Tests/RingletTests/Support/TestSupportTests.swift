import Testing
@testable import Ringlet

/// The test support's bounded waits are never silent when they run out: a wait that
/// had a real patience records an issue carrying the live dump, so a stall on CI says
/// which threads, queues and timers were stuck; a short negative check ("nothing
/// happens within 0.1 s"), which expects to run out, records nothing. The reports are
/// captured here (`TimedOutWaitReports`) instead of recorded as issues.
@Suite struct TestSupportTests {
    /// What `body` reported, captured.
    private func reports(_ body: () -> Void) -> [String] {
        let captured = Recorder<String>()
        TimedOutWaitReports.$capture.withValue(captured) { body() }
        return captured.values
    }

    private func carryTheDump(_ reports: [String], naming what: String) -> Bool {
        guard reports.count == 1, let text = reports.first else { return false }
        return text.hasPrefix("\(what): not done within its patience of 1.0 s") && text.contains("load average")
            && text.contains("Ringlet dump of process") && text.contains("pool threads")
            && text.contains("timers armed") && text.contains("pools:")
    }

    @Test func aConditionThatNeverHoldsReportsTheLiveDump() {
        _ = Runtime.current  // a runtime to dump, whichever test runs first
        let text = reports { #expect(!eventually(within: 1) { false }) }
        #expect(carryTheDump(text, naming: "eventually"), "\(text)")
    }

    @Test func aSemaphoreNeverSignalledReportsTheLiveDump() {
        _ = Runtime.current
        let text = reports { #expect(!waited(DispatchSemaphore(value: 0), seconds: 1)) }
        #expect(carryTheDump(text, naming: "a semaphore wait"), "\(text)")
    }

    @Test func aGroupNeverEmptiedReportsTheLiveDump() {
        _ = Runtime.current
        let group = DispatchGroup()
        group.enter()
        let text = reports { #expect(!waited(group, seconds: 1)) }
        group.leave()
        #expect(carryTheDump(text, naming: "a group wait"), "\(text)")
    }

    @Test func aShortNegativeCheckReportsNothing() {
        let text = reports {
            #expect(!eventually(within: 0.05) { false })
            #expect(!waited(DispatchSemaphore(value: 0), seconds: 0.05))
            #expect(!Gate().pass(within: 0.05))
        }
        #expect(text.isEmpty, "\(text)")
    }
}
