// A work item that needs more stack than a pool thread has: the process still ends
// (as it would on Dispatch's threads with a deeper recursion), but first Ringlet
// says which thread ran out, running which queue's item, how big its stack is and
// which profile key sets it; then the fault goes on to whatever handled it before
// (the default action, Swift's backtracer, a sanitizer).

import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

/// Under ThreadSanitizer or AddressSanitizer the sanitizer takes SIGSEGV first and
/// reports the overflow itself (as it should: the guard hands faults on), and its
/// death callback records that report as a failure of the child.
@Suite(.enabled(if: !sanitizerActive, "a sanitizer handles SIGSEGV itself and reports the fault"))
struct StackOverflowTests {
    @Test func aWorkerThatRunsOutOfStackSaysSoAndNamesTheQueueAndTheKey() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            StackOverflowScenarios.overflowOnAQueue()
        }
        let text = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(text.contains("Ringlet: stack overflow: thread 'ringlet-"), "stderr: \(text.suffix(2000))")
        #expect(text.contains("running an item of queue 'test.stack.deep'"))
        #expect(text.contains("524288-byte stack"))
        #expect(text.contains("'workerStackBytes'"))
    }

    /// A SIGSEGV another thread or process sends is not a fault that comes again: the
    /// guard raises it again, and it ends the process as it would without Ringlet.
    @Test func aSIGSEGVSentByKillStillEndsTheProcess() async {
        await #expect(processExitsWith: .signal(SIGSEGV)) { StackOverflowScenarios.segvSent() }
    }

    /// The guard hands the fault on: a fault that is not an overflow is not reported
    /// as one, and still ends the process as before.
    @Test func aFaultThatIsNotAnOverflowIsNotReportedAsOne() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            StackOverflowScenarios.nullWriteOnAQueue()
        }
        let text = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(!text.contains("stack overflow"), "stderr: \(text.suffix(2000))")
    }
}

enum StackOverflowScenarios {
    /// Recurses `depth` times with a kilobyte of locals per call.
    @inline(never)
    static func recurse(_ depth: Int) -> Int {
        var locals = [UInt64](repeating: 0, count: 0)
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 120) { buffer in
            buffer.initialize(repeating: UInt64(depth))
            locals.append(buffer[depth % 120])
            return depth == 0 ? 0 : recurse(depth - 1) &+ Int(truncatingIfNeeded: buffer[0]) &+ locals.count
        }
    }

    static func overflowOnAQueue() {
        startRuntime(twoCoreConfiguration())
        let done = DispatchSemaphore(value: 0)
        // About 1 KiB a level: 10,000 levels are some 10 MiB, past any pool stack.
        DispatchQueue(label: "test.stack.deep").async {
            print(recurse(10_000))
            done.signal()
        }
        _ = done.wait(timeout: .now() + 30)
    }

    static func segvSent() {
        startRuntime(twoCoreConfiguration())
        _ = rl_signal_send(SIGSEGV)
        // Not reached: the signal ends the process.
        sleepMilliseconds(5_000)
    }

    static func nullWriteOnAQueue() {
        startRuntime(twoCoreConfiguration())
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "test.stack.null").async {
            let address = UnsafeMutablePointer<Int>(bitPattern: 8)
            address.unsafelyUnwrapped.pointee = 1
            done.signal()
        }
        _ = done.wait(timeout: .now() + 30)
    }
}
