// Helpers for the Swift concurrency suites. Each scenario runs in a child process (an
// exit test). The test harness there already runs tasks on the toolchain's executor,
// so a runtime started inside it leaves Swift concurrency there (and says so); the
// scenario installs Ringlet's executors itself (`installForTests`), after which its
// own task runs on Ringlet's pool. The child ends itself with `Runtime.exit(status:)`
// (the harness's main-actor work would now go to Ringlet's main queue, which nothing
// drains there): status 0, or 1 after writing what failed to stderr. What needs the
// process's main thread (`@MainActor`, an async main) runs in the probe program
// (Sources/RingletConcurrencyProbe), whose main thread calls `dispatchMain()`.

import CRingletTestSupport
import Synchronization
import Testing
@testable import Ringlet

enum ConcurrencyChild {
    /// Starts the runtime, installs the executors, runs `scenario` (nil: passed) and
    /// ends the process with its verdict.
    static func run(_ configuration: RuntimeConfiguration = twoCoreConfiguration(),
                    _ scenario: @escaping @Sendable () async -> String?) async {
        startRuntime(configuration)
        ConcurrencyExecutors.installForTests()
        // Detached, so that the scenario starts on Ringlet's pool, not on the harness's thread.
        let failure = await Task.detached { await scenario() }.value
        if let failure { fail(failure) }
        Runtime.exit(status: 0)
    }

    /// Ends the child with `message` as an issue the parent shows: when the exit
    /// expectation fails, `#expect(processExitsWith:)` returns nil, so only a
    /// forwarded issue carries what failed to the parent's log.
    static func fail(_ message: String) -> Never {
        writeToStandardError("scenario failed: \(message)")
        Issue.record("scenario failed: \(message)")
        Runtime.exit(status: 1)
    }
}

/// Whether the calling thread is one of Ringlet's pool threads.
var onPoolThread: Bool { ThreadContext.current.worker != nil }

/// The kernel's id of the calling thread.
var currentThreadID: Int32 { ThreadControl.threadID }

