// Misuse of sources, each in a child process: SIGABRT, and stderr names the source
// (its fd, signal or kind) and the queue.

import Testing
@testable import Ringlet

@Suite struct SourceMisuseTests {
    @Test func aReadSourceOnAClosedFdNamesTheFdAndTheQueue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            _ = DispatchSource.makeReadSource(fileDescriptor: 987, queue: DispatchQueue(label: "test.misuse.fd"))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("fd 987"), "\(text)")
        #expect(text.contains("'test.misuse.fd'"), "\(text)")
        #expect(text.contains("cancel handler"), "\(text)")
    }

    @Test func aSignalThatCannotBeCaughtIsRefused() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            _ = DispatchSource.makeSignalSource(signal: 9, queue: DispatchQueue(label: "test.misuse.sigkill"))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("signal: 9"), "\(text)")
        #expect(text.contains("'test.misuse.sigkill'"), "\(text)")
    }

    @Test func addingDataToATimerIsRefused() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "test.misuse.timer-data"))
            (timer as! DispatchSource).add(data: 1)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("timer source (queue 'test.misuse.timer-data')"), "\(text)")
        #expect(text.contains("only user-data sources"), "\(text)")
    }

    @Test func schedulingANonTimerIsRefused() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.misuse.schedule"))
            (source as! DispatchSource).schedule(deadline: .now())
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("user-data source (queue 'test.misuse.schedule')"), "\(text)")
        #expect(text.contains("only timer sources"), "\(text)")
    }
}

/// Signal numbers and process ids a source cannot watch are refused when the source
/// is made, naming the number, the queue and what to use instead.
@Suite struct SourceArgumentTests {
    @Test(arguments: [Int32(32), 33])
    func glibcsOwnSignalsAreRefusedNamingSIGRTMIN(_ signal: Int32) async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) { [signal] in
            _ = DispatchSource.makeSignalSource(signal: signal, queue: DispatchQueue(label: "test.misuse.sigreserved"))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("makeSignalSource(signal: \(signal)) for queue 'test.misuse.sigreserved'"), "\(text)")
        #expect(text.contains("reserved by glibc"), "\(text)")
        #expect(text.contains("use SIGRTMIN (34) or a later real-time signal"), "\(text)")
    }

    @Test(arguments: [(Int32(19), "SIGSTOP, which no process can catch"), (0, "0 is not a signal number"),
                      (65, "65 is not a signal number: Linux signals are 1...64")])
    func otherSignalsThatCannotBeWatchedSayWhy(_ signal: Int32, _ why: String) async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) { [signal] in
            _ = DispatchSource.makeSignalSource(signal: signal, queue: DispatchQueue(label: "test.misuse.signal"))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("makeSignalSource(signal: \(signal)) for queue 'test.misuse.signal'"), "\(text)")
        #expect(text.contains(why), "\(text)")
    }

    @Test(arguments: [Int32(0), -1])
    func aProcessSourceForPidZeroOrBelowIsRefused(_ pid: Int32) async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) { [pid] in
            _ = DispatchSource.makeProcessSource(identifier: pid, eventMask: .exit,
                                                 queue: DispatchQueue(label: "test.misuse.pid"))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("makeProcessSource(identifier: \(pid)) for queue 'test.misuse.pid'"), "\(text)")
        #expect(text.contains("\(pid) is not a process id"), "\(text)")
    }
}
