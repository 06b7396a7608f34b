// The work-node pool when it runs short: a submitter waiting for a node is woken as
// soon as nodes are free and the threads freeing them go idle, even when nodes held
// for long (asyncAfter items not yet due) keep the free count below the wake-up
// threshold; and dispatch sources never take nodes from the pool. Each test runs in
// a child process with a small pool, and submits from a thread of its own so that a
// hang shows as a bounded wait that fails.

import Glibc
import Testing
@testable import Ringlet

@Suite struct PoolExhaustionTests {
    /// 8192 nodes, all but 300 held by asyncAfter items an hour away; a burst of 2000
    /// items needs the pool to refill many times from those 300.
    @Test func aSubmitterIsWokenBelowTheThresholdWhenTheDrainersGoIdle() async {
        await #expect(processExitsWith: .success) { PoolScenarios.burstUnderLongHeldNodes() }
    }

    /// With 64 nodes, 200 active sources and work that needs every free node: sources
    /// hold none of them.
    @Test func sourcesTakeNoNodesFromThePool() async {
        await #expect(processExitsWith: .success) { PoolScenarios.manySourcesOnASmallPool() }
    }
}

enum PoolScenarios {
    /// Runs `body` on a thread of its own and waits at most `seconds` for it to finish.
    static func finishes(within seconds: Double = patienceSeconds, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = AtomicCounter()
        do throws(Errno) {
            try ThreadControl.start(stackBytes: 0) {
                body()
                done.increment()
            }
        } catch {
            Issue.record("no thread: \(error)")
            return false
        }
        return eventually(within: seconds) { done.value == 1 }
    }

    static func burstUnderLongHeldNodes() {
        startRuntime(RuntimeConfiguration(cores: 2, workNodes: 8192))
        let queue = DispatchQueue(label: "test.pool.burst")
        let ran = AtomicCounter()
        let group = DispatchGroup()
        let finished = finishes {
            for _ in 0..<(8192 - 300) { queue.asyncAfter(deadline: .now() + 3600) { ran.increment(by: 1_000_000) } }
            for _ in 0..<2000 { queue.async(group: group) { ran.increment() } }
            _ = group.wait(timeout: deadline())
        }
        #expect(finished, "the burst hung: \(ran.value) of 2000 items ran")
        #expect(ran.value == 2000)
    }

    static func manySourcesOnASmallPool() {
        startRuntime(RuntimeConfiguration(cores: 2, workNodes: 64))
        let sources = (0..<200).map { index -> DispatchSourceUserDataAdd in
            let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.pool.source\(index)"))
            source.setEventHandler {}
            return source
        }
        let ran = AtomicCounter()
        nonisolated(unsafe) let activating = sources  // Dispatch's sources are not Sendable
        let finished = finishes {
            for source in activating { source.activate() }
            // Two items that wait on each other need the pool's nodes for the rest.
            let group = DispatchGroup()
            let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
            DispatchQueue.global().async(group: group) { first.signal(); _ = second.wait(timeout: deadline()) }
            DispatchQueue.global().async(group: group) { _ = first.wait(timeout: deadline()); second.signal() }
            for _ in 0..<500 { DispatchQueue.global().async(group: group) { ran.increment() } }
            _ = group.wait(timeout: deadline())
        }
        #expect(finished, "activating sources or submitting hung: \(ran.value) of 500 items ran")
        #expect(ran.value == 500)
        for source in sources { source.cancel() }
    }
}
