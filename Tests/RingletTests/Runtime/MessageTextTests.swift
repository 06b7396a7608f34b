// The runtime's messages go through its own, never-inlined interpolation and `+=`
// (Sources/Ringlet/Runtime/MessageText.swift): they must read exactly as the standard
// library would write them, for every kind of value a message interpolates.

import Testing
@testable import Ringlet

@Suite struct MessageTextTests {
    /// Int and Int32 (negative too), through `validate()`'s messages.
    @Test func signedValuesReadAsTheStandardLibraryWritesThem() {
        var configuration = RuntimeConfiguration(cores: -3)
        var error = #expect(throws: RuntimeError.self) { try configuration.validate() }
        #expect(error?.description == "invalid runtime configuration: key 'cores' must be 1...256 (got -3)")
        configuration = RuntimeConfiguration(cores: 2)
        configuration.dumpSignal = -1
        error = #expect(throws: RuntimeError.self) { try configuration.validate() }
        #expect(error?.description == "invalid runtime configuration: key 'dumpSignal' must be off (0), SIGQUIT (3), "
            + "SIGUSR1 (10) or SIGUSR2 (12) (got -1)")
    }

    /// UInt64, through the reports' durations.
    @Test func unsignedValuesReadAsTheStandardLibraryWritesThem() {
        #expect(StallReport.seconds(2_340_000_000) == "2.3")
        #expect(StallReport.seconds(UInt64.max) == "\(UInt64.max / 1_000_000_000).\(UInt64.max / 100_000_000 % 10)")
        #expect(ManagerThread.milliseconds(12_500_000) == "12.5 ms")
    }

    /// Lines built with `+=` and interpolated strings, through the reports' thread section.
    @Test func appendedTextReads() {
        let parked = StallReport.ThreadState(name: "ringlet-w0", band: .high, state: .parked, blockedOn: nil,
                                             coveredInKernel: false, blockedQueue: nil, queueAddress: 0, onItemFor: 0)
        let text = DumpSections.threads([parked, parked], heading: "pool threads", durationsKnown: false)
        let line = "    ringlet-w0 [high] is parked (idle)\n"
        #expect(text == "  pool threads (2):\n" + line + line)
    }
}
