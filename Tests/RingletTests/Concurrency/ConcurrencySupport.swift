// Helpers for the Swift concurrency suites. Each scenario runs in a child process (an
// exit test). The test harness there already runs tasks on the toolchain's executor,
// so a runtime started inside it leaves Swift concurrency there (and says so); the
// scenario installs Ringlet's executors itself (`installForTests`), after which its
// own task runs on Ringlet's pool. The child ends itself with `Runtime.exit(status:)`
// (the harness's main-actor work would now go to Ringlet's main queue, which nothing
// drains there): status 0, or 1 after writing what failed to stderr. What needs the
// process's main thread (`@MainActor`, an async main) runs in the probe program
// (Sources/RingletConcurrencyProbe), whose main thread calls `dispatchMain()`.
//
// A scenario never hangs its child: its waits are bounded, and an `await` that cannot
// be (a task that never resumes) is caught by a watchdog thread that ends the child
// naming the step it stuck in (`ConcurrencyChild.step`), with the runtime's dump.

import CRingletTestSupport
import Glibc
import Synchronization
import Testing
@testable import Ringlet

enum ConcurrencyChild {
    /// Starts the runtime, installs the executors, runs `scenario` (nil: passed) and
    /// ends the process with its verdict.
    static func run(_ configuration: RuntimeConfiguration = twoCoreConfiguration(),
                    _ scenario: @escaping @Sendable () async -> String?) async {
        startRuntime(configuration)
        startWatchdog()
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

    /// How long one step of a scenario may last before the watchdog ends the child:
    /// longer than a bounded wait inside it (the patience), so that those fail first
    /// and say more.
    static var stepLimitSeconds: Double { 3 * patienceSeconds }

    /// Names what the scenario does from now on; the watchdog's report quotes it when
    /// the step lasts longer than `stepLimitSeconds`.
    static func step(_ text: String) {
        let now = monotonicNanoseconds
        scenarioStep.set(text, since: now)
    }

    /// A thread of its own (not the pool's, which may be what is stuck) that fails the
    /// scenario once a step outlasts the limit.
    private static func startWatchdog() {
        step("starting the scenario")
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { _ in
            ConcurrencyChild.watch()
            return nil
        }, nil)
        precondition(created == 0, "pthread_create failed: \(created)")
        pthread_detach(thread)
    }

    private static func watch() {
        while true {
            let (text, since) = scenarioStep.current
            let lasted = secondsSince(since)
            if lasted > stepLimitSeconds {
                fail("stuck for \(Int(lasted)) s at: \(text)\n\(Runtime.dump())")
            }
            sleepMilliseconds(100)
        }
    }
}

/// The scenario's current step and when it began (`ConcurrencyChild.step`). Behind the
/// runtime's own lock, not `Synchronization.Mutex`: ThreadSanitizer sees this one's
/// atomics (built here, instrumented) and not the prebuilt Mutex's, and under `make
/// tsan` it reported the watchdog's read and a step's write as a data race.
private final class ScenarioStep: @unchecked Sendable {
    private let lock = FutexLock()
    private var text = ""
    private var since: UInt64 = 0

    func set(_ text: String, since: UInt64) { lock.withLock { (self.text, self.since) = (text, since) } }
    var current: (text: String, since: UInt64) { lock.withLock { (text, since) } }
}

private let scenarioStep = ScenarioStep()

/// Whether the calling thread is one of Ringlet's pool threads.
var onPoolThread: Bool { ThreadContext.current.worker != nil }

/// The kernel's id of the calling thread.
var currentThreadID: Int32 { ThreadControl.threadID }

