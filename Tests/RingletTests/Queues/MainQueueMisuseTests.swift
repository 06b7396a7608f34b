// Misuse around the main queue that used to hang without a word: `dispatchMain()`
// from a main-queue item and `sync` from the main thread onto a queue that targets
// the main queue trap, naming the queue; work the main queue holds while nothing
// drains it (a `sync` onto it while the main thread waits on a semaphore, `@MainActor`
// work in a program that never calls `dispatchMain()`) is reported after
// `mainQueueGraceMilliseconds`, and never while the main thread drains the queue.
// These need a process's real main thread, which the tests' child processes do not
// run code on: the probe program (Sources/RingletConcurrencyProbe) plays each
// scenario, and the test reads its exit status and stderr.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

/// Off under a sanitizer: under AddressSanitizer, running these probes (two of which
/// trap, which starts Swift's backtracer in the instrumented probe) ended the test
/// process itself mid-run, its other suites with it (`make asan`; the cause is not
/// found yet). `make unit` and `make unit-epoll` run them.
@Suite(.enabled(if: !sanitizerActive, "the probes' traps ended the instrumented test process"))
struct MainQueueMisuseTests {
    /// Runs the probe's `scenario`; its exit status and what it wrote on stderr.
    static func probe(_ scenario: String) -> (status: Int32, stderr: String) {
        guard let path = ConcurrencyMainTests.probePath else { return (-1, "no probe program") }
        let file = "/tmp/ringlet-probe-\(rl_process_id())-\(UInt32.random(in: 0...UInt32.max)).stderr"
        defer { unlink(file) }
        let pid = rl_process_spawn_program_capturing(path, scenario, file)
        guard pid > 0 else { return (pid, "spawn failed") }
        // A regression would hang the probe: it is killed after a minute.
        let status = rl_process_reap_within(pid, 60_000)
        // Read without Foundation, whose file read leaks a buffer LeakSanitizer reports.
        let bytes = (try? MachineFiles.read(path: file, limit: 1 << 20)) ?? []
        let text = String(decoding: bytes, as: UTF8.self)
        return (status, text)
    }

    @Test func dispatchMainFromAMainQueueItemTraps() {
        let (status, text) = Self.probe("dispatch-main-from-main-item")
        #expect(status != 0)
        #expect(text.contains("dispatchMain() called from an item of queue 'com.apple.main-thread'"),
                "stderr: \(text.suffix(1500))")
    }

    @Test func drainMainQueueFromAMainQueueItemTraps() {
        let (status, text) = Self.probe("drain-main-queue-from-main-item")
        #expect(status != 0)
        #expect(text.contains("Runtime.drainMainQueue() called from an item of queue 'com.apple.main-thread'"),
                "stderr: \(text.suffix(1500))")
    }

    @Test func syncFromTheMainThreadOntoAQueueTargetingMainTraps() {
        let (status, text) = Self.probe("sync-onto-main-target")
        #expect(status != 0)
        #expect(text.contains("sync onto queue 'probe.main.child', which targets the main queue, called on the main "
            + "thread"), "stderr: \(text.suffix(1500))")
    }

    @Test func mainSyncWhileTheMainThreadWaitsOnASemaphoreIsReported() {
        let (status, text) = Self.probe("main-sync-while-main-waits")
        #expect(status == 0, "stderr: \(text.suffix(1500))")
        #expect(text.contains("the main queue has had work waiting for 200 ms and nothing drains it"))
        #expect(text.contains("it is blocked in DispatchSemaphore.wait()"))
        #expect(text.contains("'mainQueueGraceMilliseconds'"))
    }

    @Test func mainActorWorkNeverDrainedIsReported() {
        let (status, text) = Self.probe("main-actor-never-drained")
        #expect(status == 0, "stderr: \(text.suffix(1500))")
        #expect(text.contains("the main queue has had work waiting for 200 ms and nothing drains it"))
    }

    @Test func aMainQueueThatDispatchMainDrainsIsNeverReported() {
        let (status, text) = Self.probe("drained-never-reported")
        #expect(status == 0, "stderr: \(text.suffix(1500))")
        #expect(!text.contains("the main queue has had work waiting"))
    }
}
