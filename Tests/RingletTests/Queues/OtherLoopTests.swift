// The main queue inside another loop: a main thread that runs its own poll(2) loop
// serves the main queue through Runtime.mainQueueDescriptor() and drainMainQueue().
// The loop needs a process's real main thread, which the tests' own child processes
// do not run code on: the probe program (Sources/RingletConcurrencyProbe/OtherLoop.swift)
// runs it and says on stdout what failed.

import Glibc
import Testing
@testable import Ringlet

@Suite struct OtherLoopTests {
    /// Idle, the descriptor stays unreadable through a poll timeout; 200 main-queue
    /// items and @MainActor jobs from the pool and an asyncAfter run on the main thread
    /// in order while the loop serves a pipe of its own; then it is unreadable again.
    @Test func aPollLoopOnTheMainThreadServesTheMainQueue() {
        #expect(ConcurrencyMainTests.runProbe("poll-loop") == 0, "probe at \(ConcurrencyMainTests.probePath ?? "?")")
    }

    /// A Foundation program whose main thread sits in RunLoop.main.run(mode:before:),
    /// never in dispatchMain(): Ringlet's main-queue items, @MainActor jobs and an
    /// asyncAfter run there, on the main thread, in order (RingletFoundationCompat's
    /// run-loop bridge; without it nothing ran in 20 s).
    @Test func foundationsMainRunLoopRunsRingletsMainQueue() {
        #expect(ConcurrencyMainTests.runProbe("run-loop", program: "RingletFoundationProbe") == 0,
                "probe at \(ConcurrencyMainTests.programPath("RingletFoundationProbe") ?? "?")")
    }

    /// A main-queue item that spins RunLoop.main itself: the next item waits for it (the
    /// queue is serial), and the spin neither traps nor keeps a core busy.
    @Test func aRunLoopSpunInsideAMainQueueItemKeepsTheQueueSerial() {
        #expect(ConcurrencyMainTests.runProbe("run-loop-nested", program: "RingletFoundationProbe") == 0,
                "probe at \(ConcurrencyMainTests.programPath("RingletFoundationProbe") ?? "?")")
    }

    /// Expectations fulfilled by Ringlet's main queue complete inside XCTWaiter's wait,
    /// as in a scheduler library's XCTest suite built with the README's import recipe.
    @Test func anXCTestWaitRunsRingletsMainQueue() {
        #expect(ConcurrencyMainTests.runProbe("xctest-wait", program: "RingletFoundationProbe") == 0,
                "probe at \(ConcurrencyMainTests.programPath("RingletFoundationProbe") ?? "?")")
    }

    @Test func drainingFromAnotherThreadTrapsNamingTheCall() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            Runtime.drainMainQueue()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("Runtime.drainMainQueue() called from a thread that is not the main thread"), "\(text)")
    }
}
