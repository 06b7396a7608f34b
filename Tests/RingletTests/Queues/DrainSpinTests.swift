// A worker that runs a serial queue dry spins up to `spinMicroseconds` for another push
// only while spinning pays: not at every one of many queues whose items were all
// pushed before, but still for a queue whose producer keeps up with the drain.
import Testing
@testable import Ringlet

@Suite struct DrainSpinTests {
    @Test func manyQueuesWithAnItemEachDoNotSpinAtEveryQueue() async {
        await #expect(processExitsWith: .success) { DrainSpinScenarios.manyQueuesThenProducers() }
    }
}

enum DrainSpinScenarios {
    static func manyQueuesThenProducers() {
        startRuntime(twoCoreConfiguration())
        guard poolParked() else { Issue.record("the pool never parked: \(Runtime.statistics)"); return }
        let pool = Runtime.statistics.workers + Runtime.statistics.reserve

        // 200 queues with one item each, pushed before any may run.
        let group = DispatchGroup()
        let queues = (0..<200).map { DispatchQueue(label: "test.spin.q\($0)", attributes: .initiallyInactive) }
        for queue in queues { queue.async(group: group) {} }
        let before = Runtime.statistics.drainSpins
        for queue in queues { queue.activate() }
        #expect(waited(group))
        let spent = Runtime.statistics.drainSpins - before
        #expect(spent <= 2 * pool, "\(spent) spins for 200 queues with an item each (at most 2 per worker)")

        // Then queues whose items push the next one while the drain runs: each drain
        // ends in a spin, however fruitless the workers' spins were before.
        let chains = 20
        let afterQueues = Runtime.statistics.drainSpins
        for index in 0..<chains {
            let queue = DispatchQueue(label: "test.spin.chain\(index)")
            let done = DispatchSemaphore(value: 0)
            @Sendable func step(_ left: Int) {
                if left == 0 { done.signal(); return }
                queue.async { step(left - 1) }
            }
            queue.async { step(50) }
            guard waited(done) else { Issue.record("chain \(index) did not finish"); return }
        }
        #expect(eventually { Runtime.statistics.drainSpins - afterQueues >= chains },
                "\(Runtime.statistics.drainSpins - afterQueues) spins for \(chains) self-feeding queues")
    }
}
