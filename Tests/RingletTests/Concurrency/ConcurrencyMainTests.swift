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

    static func runAsyncMain(_ scenario: String, environment: String? = nil) -> Int32 {
        guard let path = programPath("RingletAsyncMainProbe") else { return -1 }
        let pid = environment.map { rl_process_spawn_program_with_env(path, scenario, $0) }
            ?? rl_process_spawn_program(path, scenario)
        guard pid > 0 else { return pid }
        return rl_process_reap(pid)
    }

    /// An async main with only the import: its first line may still configure the
    /// runtime (nothing has run: its first job waited on the main thread), and its
    /// tasks, group, actor, main-actor hops and 256 sleeps run on the pool, the
    /// process's threads never more than the pool's.
    @Test func anAsyncMainRunsOnThePoolAndMayStartTheRuntimeFirst() {
        #expect(Self.runAsyncMain("start-first") == 0, "RingletAsyncMainProbe start-first (its stdout says what failed)")
    }

    /// The same without `Runtime.start`: the first task starts the runtime.
    @Test func anAsyncMainStartsTheRuntimeOnItsFirstTask() {
        #expect(Self.runAsyncMain("first-use") == 0, "RingletAsyncMainProbe first-use")
    }

    /// `Runtime.start` after a task has run throws `.alreadyStarted`, naming the cause
    /// and the fix.
    @Test func startingAfterATaskRanSaysWhyAndWhatToDo() {
        #expect(Self.runAsyncMain("start-late") == 0, "RingletAsyncMainProbe start-late")
    }

    /// A main-actor job held before the start runs once the runtime is started by a
    /// bare `Runtime.current`, which publishes nothing (the move must not deadlock).
    @Test func aHeldJobRunsAfterABareStart() {
        #expect(Self.runAsyncMain("held-then-started") == 0, "RingletAsyncMainProbe held-then-started")
    }

    /// An async main that never uses Ringlet starts no thread of it.
    @Test func anAsyncMainThatNeverUsesRingletStartsNoThread() {
        #expect(Self.runAsyncMain("unused") == 0, "RingletAsyncMainProbe unused")
    }

    /// RINGLET_SWIFT_CONCURRENCY=toolchain keeps the toolchain's executors.
    @Test func theEnvironmentKeepsTheToolchainsExecutors() {
        #expect(Self.runAsyncMain("toolchain", environment: "RINGLET_SWIFT_CONCURRENCY=toolchain") == 0,
                "RingletAsyncMainProbe toolchain")
    }

    /// A `@MainActor` task made before anything started the runtime waits, and runs once
    /// `dispatchMain()` starts it (its first drain moves the held job to the main queue).
    @Test func aMainActorJobHeldBeforeTheStartRunsInDispatchMain() {
        #expect(Self.runProbe("main-actor-before-start") == 0, "RingletConcurrencyProbe main-actor-before-start")
    }

    /// 'swiftConcurrency' false at a start before any job hands the executors back.
    @Test func theKeyOffBeforeAnyJobHandsTheExecutorsBack() {
        #expect(Self.runProbe("swift-concurrency-off") == 0, "RingletConcurrencyProbe swift-concurrency-off")
    }
}
