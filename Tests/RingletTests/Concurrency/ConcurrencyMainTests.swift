// @MainActor and the main queue share one FIFO on the process's main thread, driven by
// dispatchMain(). The tests' own processes do not run it, so these start the probe
// program (Sources/RingletConcurrencyProbe), built next to the test bundle, and check
// its exit status; it says on stdout what failed.

import CRingletTestSupport
import Testing
@testable import Ringlet

@Suite struct ConcurrencyMainTests {
    /// The probe program beside this test executable.
    static var probePath: String? { programPath("RingletConcurrencyProbe") }

    /// The program `name` beside this test executable.
    static func programPath(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = rl_self_executable(&buffer, UInt64(buffer.count - 1))
        guard length > 0 else { return nil }
        let path = String(decoding: buffer[0..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        // The test bundle is <bin>/RingletPackageTests.xctest (a file on Linux).
        var directory = String(path[..<slash])
        if directory.hasSuffix(".xctest") { directory = String(directory[..<directory.lastIndex(of: "/")!]) }
        return directory + "/" + name
    }

    static func runProbe(_ scenario: String, program: String = "RingletConcurrencyProbe") -> Int32 {
        guard let path = programPath(program) else { return -1 }
        let pid = rl_process_spawn_program(path, scenario)
        guard pid > 0 else { return pid }
        return rl_process_reap(pid)
    }

    @Test func mainActorTasksRunOnTheMainThread() {
        #expect(Self.runProbe("main-actor") == 0, "probe at \(Self.probePath ?? "?")")
    }

    @Test func mainActorJobsShareOneFIFOWithTheMainQueue() {
        #expect(Self.runProbe("dispatch-main") == 0, "probe at \(Self.probePath ?? "?")")
    }

    /// An async main's task is bound to the toolchain's main executor before the runtime
    /// can start: Ringlet leaves Swift concurrency there, and the main's awaits resume.
    @Test func anAsyncMainKeepsTheToolchainsExecutors() {
        #expect(Self.runProbe("", program: "RingletAsyncMainProbe") == 0,
                "probe at \(Self.programPath("RingletAsyncMainProbe") ?? "?")")
    }
}
