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
