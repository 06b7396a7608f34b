// The runtime's bounded resources and what it reports about them: configuration
// validation, the fixed work-node pool (a full pool makes submitters wait and drops
// nothing), and the counters in `Runtime.statistics`.

import Testing
@testable import Ringlet

@Suite struct RuntimeStatisticsTests {
    @Test func derivedConfigurationMatchesTheMachine() {
        let derived = RuntimeConfiguration.derived()
        #expect(derived.cores == ThreadControl.onlineCPUs)
        #expect(derived.workers == derived.cores * 2)
        #expect(derived.reserve == derived.cores)
        #expect(derived.poolThreads == derived.workers + derived.reserve)
        #expect(throws: Never.self) { try derived.validate() }
    }

    @Test func workerPlanSplitsTheBands() {
        let plan = RuntimeConfiguration(cores: 2).workerPlan
        let counts = Dictionary(uniqueKeysWithValues: plan.map { ($0.0, $0.1) })
        #expect(counts[.high] == 2 && counts[.utility] == 1 && counts[.background] == 1 && counts[.reserve] == 2)
        let odd = RuntimeConfiguration(cores: 3, lowQoSWorkers: 3).workerPlan
        let total = odd.reduce(0) { $0 + $1.1 }
        #expect(total == 9)
    }

    @Test(arguments: [
        (RuntimeConfiguration(cores: 0), "cores"),
        (RuntimeConfiguration(cores: 1, workersPerCore: 1), "workersPerCore"),
        (RuntimeConfiguration(cores: 2, workersPerCore: 17), "workersPerCore"),
        (RuntimeConfiguration(cores: 2, reservePerCore: -1), "reservePerCore"),
        (RuntimeConfiguration(cores: 2, lowQoSWorkers: 4), "lowQoSWorkers"),
        (RuntimeConfiguration(cores: 2, workNodes: 10), "workNodes"),
        (RuntimeConfiguration(cores: 2, workerStackBytes: 1024), "workerStackBytes"),
        (RuntimeConfiguration(cores: 2, utilityNice: 20), "utilityNice"),
        (RuntimeConfiguration(cores: 2, deadlockGraceMilliseconds: 1), "deadlockGraceMilliseconds"),
        (RuntimeConfiguration(cores: 2, drainBatch: 0), "drainBatch"),
        ({ var c = RuntimeConfiguration(cores: 2); c.mainQueueGraceMilliseconds = -1; return c }(),
         "mainQueueGraceMilliseconds"),
        ({ var c = RuntimeConfiguration(cores: 2); c.descriptorCheckMilliseconds = 600_001; return c }(),
         "descriptorCheckMilliseconds"),
        (RuntimeConfiguration(cores: 2, ringEntries: 4), "ringEntries"),
        (RuntimeConfiguration(cores: 2, backgroundLeewayPercent: 101), "backgroundLeewayPercent"),
        (RuntimeConfiguration(cores: 2, utilityLeewayPercent: -1), "utilityLeewayPercent"),
        (RuntimeConfiguration(cores: 2, backgroundLeewayMaxMilliseconds: 60_001), "backgroundLeewayMaxMilliseconds"),
        (RuntimeConfiguration(cores: 2, utilityLeewayMaxMilliseconds: -5), "utilityLeewayMaxMilliseconds"),
    ])
    func invalidConfigurationsNameTheKey(configuration: RuntimeConfiguration, key: String) {
        do throws(RuntimeError) {
            try configuration.validate()
            Issue.record("\(key): accepted")
        } catch {
            guard case .invalidConfiguration(let named, _) = error else {
                Issue.record("\(key): threw \(error)")
                return
            }
            #expect(named == key)
            #expect(error.description.contains("'\(key)'"))
        }
    }

    @Test func aFullWorkNodePoolMakesSubmittersWait() async {
        await #expect(processExitsWith: .success) { RuntimeStatisticsScenarios.nodePoolExhaustion() }
    }

    @Test func aFullPoolCannotStallManyQueuesAndProducers() async {
        await #expect(processExitsWith: .success) { RuntimeStatisticsScenarios.nodePoolExhaustionManyQueues() }
    }

    @Test func statisticsCountItemsAndPendingWork() async {
        await #expect(processExitsWith: .success) { RuntimeStatisticsScenarios.counters() }
    }
}

enum RuntimeStatisticsScenarios {
    static func nodePoolExhaustion() {
        startRuntime(RuntimeConfiguration(cores: 2, workNodes: 64))
        let queue = DispatchQueue(label: "test.nodes.serial")
        let counters = SlotCounters(count: 5_000)
        let order = Recorder<Int>()
        let group = DispatchGroup()
        // The first item holds the queue while this thread submits far more items
        // than the pool has nodes: the submitter must wait, and nothing may be lost.
        queue.async(group: group) { sleepMilliseconds(100) }
        for index in 0..<counters.count {
            queue.async(group: group) {
                counters.increment(index)
                if index % 500 == 0 { order.append(index) }
            }
        }
        #expect(waited(group))
        let statistics = Runtime.statistics
        #expect(counters.slots(notEqualTo: 1) == [], "items lost or repeated")
        #expect(order.values == Array(stride(from: 0, to: counters.count, by: 500)))
        #expect(statistics.workNodeCapacity == 64)
        #expect(statistics.workNodesPeak <= 64)
        #expect(statistics.workNodeExhaustionWaits > 0, "the submitter never waited for a node")
        #expect(eventually { Runtime.statistics.workNodesInUse == 0 })
        #expect(statistics.reservedBytes == 64 * MemoryLayout<WorkNode>.stride)
    }

    static func nodePoolExhaustionManyQueues() {
        startRuntime(RuntimeConfiguration(cores: 2, workNodes: 64))
        let serial = (0..<16).map { DispatchQueue(label: "test.nodes.serial\($0)") }
        let concurrent = DispatchQueue(label: "test.nodes.concurrent", attributes: .concurrent)
        let producers = 4, perProducer = 5_000
        let counters = SlotCounters(count: producers * perProducer)
        let items = DispatchGroup()
        // Producers on pool threads and on this thread compete with the drainers'
        // own wake-ups for the 64 nodes.
        DispatchQueue.concurrentPerform(iterations: producers) { producer in
            for index in 0..<perProducer {
                let slot = producer * perProducer + index
                let queue = index % 5 == 4 ? concurrent : serial[(index + producer) % serial.count]
                queue.async(group: items) { counters.increment(slot) }
            }
        }
        #expect(waited(items, seconds: 30), "items stalled with the node pool full: \(Runtime.statistics)")
        #expect(counters.slots(notEqualTo: 1) == [], "items lost or repeated")
        #expect(Runtime.statistics.workNodesPeak <= 64)
    }

    static func counters() {
        startRuntime(RuntimeConfiguration(cores: 2))
        let before = Runtime.statistics.itemsRunPerQoS
        // Hold both high-band workers and queue work at three levels.
        var gates: [Gate] = []
        for _ in 0..<2 {
            let gate = Gate(), started = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                started.signal()
                gate.pass()
            }
            #expect(waited(started))
            gates.append(gate)
        }
        let group = DispatchGroup()
        for _ in 0..<3 { DispatchQueue.global(qos: .userInteractive).async(group: group) {} }
        for _ in 0..<2 { DispatchQueue.global(qos: .userInitiated).async(group: group) {} }
        let held = DispatchQueue(label: "test.statistics.held")
        for _ in 0..<5 { held.async(group: group) {} }
        let statistics = Runtime.statistics
        // Root run queues hold the global items and the serial queue's one wake-up...
        let runnable = statistics.runnablePerQoS
        #expect(runnable.userInteractive == 3 && runnable.userInitiated == 2 && runnable.default == 1,
                "runnable: \(runnable)")
        #expect(runnable.total == 6)
        // ...while pending counts every item not yet run, wherever it waits — and the
        // two running blockers, which count as run only once they return.
        let pending = statistics.pendingPerQoS
        #expect(pending.userInteractive == 3 && pending.userInitiated == 2 && pending.default == 5 + 2,
                "pending: \(pending)")
        #expect(statistics.workNodesInUse >= 3 + 2 + 5 + 1)
        for gate in gates { gate.open() }
        #expect(waited(group))
        for _ in 0..<4 { DispatchQueue.global(qos: .background).async(group: group) {} }
        #expect(waited(group))
        #expect(Runtime.statistics.runnablePerQoS.total == 0)
        // A worker counts an item just after it returns (after its group was left).
        func ran() -> QoSCounts { Runtime.statistics.itemsRunPerQoS }
        #expect(eventually { ran().userInteractive - before.userInteractive == 3 }, "\(ran()) from \(before)")
        #expect(ran().userInitiated - before.userInitiated == 2, "\(ran()) from \(before)")
        #expect(eventually { ran().background - before.background == 4 }, "\(ran()) from \(before)")
        // The two blockers and the held queue's five items.
        #expect(eventually { ran().default - before.default == 7 }, "\(ran()) from \(before)")
        #expect(eventually { Runtime.statistics.pendingPerQoS.total == 0 }, "\(Runtime.statistics.pendingPerQoS)")
        let ran = ran()
        #expect(ran[.userInteractive] == ran.userInteractive)
    }
}
