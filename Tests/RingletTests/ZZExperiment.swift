import Testing
@testable import Ringlet

@Suite struct ZZExperiment {
    @Test(arguments: ["a", "b"]) func exitTestCapture(label: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [label] in
            writeToStandardError("tid \(ThreadControl.threadID) pid \(ThreadControl.processID) threads \(ThreadControl.processThreadCount ?? -1) prio \(ThreadContext.current.currentPriority.level.name) label \(label)")
            let q = DispatchQueue(label: label)
            q.resume()
        }
        if let result {
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            print("STDERR:", text, result.exitStatus)
        }
    }
}
