// A backlog slows its producers: while more than `WorkNodePool.backlogYieldNodes` work
// nodes are out, a thread refilling its node cache yields the processor once per
// refill (except the manager thread); nothing is dropped or delayed beyond that.

import Testing
@testable import Ringlet

@Suite struct PoolBacklogTests {
    /// Takes `count` nodes from a pool of its own on the calling thread, as `context`.
    private static func yields(taking count: Int, as context: ThreadContext) -> Int {
        let pool = try! WorkNodePool(capacity: 40_000)
        #expect(pool.batchSize == 64, "the counts below assume refills of 64 nodes")
        for _ in 0..<count {
            _ = pool.allocate(kind: .block, priority: QoSPriority(.default), context: context)
        }
        return pool.backlogYieldCount
    }

    /// 256 refills of 64 take exactly the threshold: no yield. Three refills more: one
    /// yield each.
    @Test func aRefillPastTheThresholdYieldsOnce() {
        let threshold = WorkNodePool.backlogYieldNodes
        #expect(Self.yields(taking: threshold, as: ThreadContext(worker: nil)) == 0)
        #expect(Self.yields(taking: threshold + 3 * 64, as: ThreadContext(worker: nil)) == 3)
    }

    @Test func theManagerThreadNeverYields() {
        let manager = ThreadContext(worker: nil, lane: "manager", isManager: true)
        #expect(Self.yields(taking: WorkNodePool.backlogYieldNodes + 3 * 64, as: manager) == 0)
    }

    /// Through the runtime: 20,000 items pending on a suspended queue make the submitter
    /// yield, the statistics say so, and every item runs once when it is resumed.
    @Test func aBacklogOnASuspendedQueueIsCountedAndLosesNothing() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2, workNodes: 65_536))
            let queue = DispatchQueue(label: "test.pool.backlog")
            queue.suspend()
            let counters = SlotCounters(count: 20_000)
            let group = DispatchGroup()
            for slot in 0..<counters.count { queue.async(group: group) { counters.increment(slot) } }
            let yields = Runtime.statistics.workNodeBacklogYields
            #expect(yields > 0, "20,000 pending items: \(Runtime.statistics)")
            queue.resume()
            #expect(waited(group))
            #expect(counters.slots(notEqualTo: 1) == [], "items lost or repeated")
        }
    }
}
