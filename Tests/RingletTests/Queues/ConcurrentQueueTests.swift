// Concurrent queues and concurrentPerform: parallelism that actually happens,
// barriers that run alone and in order, every index exactly once.

import Testing
@testable import Ringlet

@Suite struct ConcurrentQueueTests {
    @Test func twoItemsRunAtTheSameTime() {
        let queue = DispatchQueue(label: "test.concurrent.parallel", attributes: .concurrent)
        let firstRunning = DispatchSemaphore(value: 0)
        let secondRunning = DispatchSemaphore(value: 0)
        let sawEachOther = Recorder<Bool>()
        let group = DispatchGroup()
        // Each item waits for the other to have started: only parallel execution lets
        // both succeed.
        queue.async(group: group) {
            firstRunning.signal()
            sawEachOther.append(secondRunning.wait(timeout: deadline()) == .success)
        }
        queue.async(group: group) {
            secondRunning.signal()
            sawEachOther.append(firstRunning.wait(timeout: deadline()) == .success)
        }
        #expect(waited(group, seconds: 2 * patienceSeconds))
        #expect(sawEachOther.values == [true, true])
    }

    @Test func barrierRunsAloneBetweenItsNeighbours() {
        let queue = DispatchQueue(label: "test.concurrent.barrier", attributes: .concurrent)
        let meter = OverlapMeter()
        let events = Recorder<String>()
        let group = DispatchGroup()
        for index in 0..<16 {
            queue.async(group: group) {
                meter.measure { sleepMilliseconds(2) }
                events.append("before\(index)")
            }
        }
        queue.async(group: group, flags: .barrier) {
            events.append(meter.current == 0 ? "barrier-alone" : "barrier-overlapped")
            sleepMilliseconds(20)
            events.append("barrier-end")
        }
        for index in 0..<16 {
            queue.async(group: group) {
                meter.measure { sleepMilliseconds(2) }
                events.append("after\(index)")
            }
        }
        #expect(waited(group))
        let values = events.values
        guard let barrier = values.firstIndex(where: { $0.hasPrefix("barrier") }),
              let barrierEnd = values.firstIndex(of: "barrier-end") else {
            Issue.record("the barrier did not run: \(values)")
            return
        }
        #expect(values[barrier] == "barrier-alone")
        #expect(barrierEnd == barrier + 1, "something ran during the barrier: \(values)")
        #expect(values[..<barrier].allSatisfy { $0.hasPrefix("before") }, "\(values)")
        #expect(values[(barrierEnd + 1)...].allSatisfy { $0.hasPrefix("after") }, "\(values)")
        #expect(values.count == 34)
    }

    @Test func barriersRunInSubmissionOrder() {
        let queue = DispatchQueue(label: "test.concurrent.barrier-order", attributes: .concurrent)
        let events = Recorder<String>()
        let group = DispatchGroup()
        for round in 0..<10 {
            for _ in 0..<4 {
                queue.async(group: group) { events.append("item\(round)") }
            }
            queue.async(group: group, flags: .barrier) { events.append("barrier\(round)") }
        }
        #expect(waited(group))
        let values = events.values
        let barriers = values.filter { $0.hasPrefix("barrier") }
        #expect(barriers == (0..<10).map { "barrier\($0)" })
        // Every item of round r ran after barrier r-1 and before barrier r.
        for round in 0..<10 {
            let barrier = values.firstIndex(of: "barrier\(round)")!
            let items = values.indices.filter { values[$0] == "item\(round)" }
            #expect(items.count == 4)
            #expect(items.allSatisfy { $0 < barrier }, "round \(round): \(values)")
            if round > 0 {
                let previous = values.firstIndex(of: "barrier\(round - 1)")!
                #expect(items.allSatisfy { $0 > previous }, "round \(round): \(values)")
            }
        }
    }

    @Test func barrierWorkItemAndSyncBarrierRunAlone() {
        let queue = DispatchQueue(label: "test.concurrent.sync-barrier", attributes: .concurrent)
        let meter = OverlapMeter()
        let group = DispatchGroup()
        let alone = Recorder<Bool>()
        for _ in 0..<8 {
            queue.async(group: group) { meter.measure { sleepMilliseconds(3) } }
        }
        queue.sync(flags: .barrier) {
            alone.append(meter.current == 0)
            dispatchPrecondition(condition: .onQueueAsBarrier(queue))
        }
        for _ in 0..<8 {
            queue.async(group: group) { meter.measure { sleepMilliseconds(3) } }
        }
        let item = DispatchWorkItem(flags: .barrier) { alone.append(meter.current == 0) }
        queue.async(execute: item)
        #expect(item.wait(timeout: deadline()) == .success)
        #expect(waited(group))
        #expect(alone.values == [true, true])
    }

    @Test func syncOnAConcurrentQueueMayRunAlongsideItems() {
        let queue = DispatchQueue(label: "test.concurrent.sync", attributes: .concurrent)
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        queue.async {
            running.signal()
            _ = release.wait(timeout: deadline())
        }
        #expect(waited(running))
        // A non-barrier sync needs no exclusive access: it runs while the item waits.
        let value = queue.sync { 11 }
        release.signal()
        #expect(value == 11)
    }

    @Test func syncFromInsideTheSameConcurrentQueue() {
        // Not a deadlock on a concurrent queue: the inner sync needs only a slot.
        let queue = DispatchQueue(label: "test.concurrent.reentrant", attributes: .concurrent)
        let values = Recorder<Int>()
        let done = DispatchSemaphore(value: 0)
        queue.async {
            values.append(queue.sync { 8 })
            done.signal()
        }
        #expect(waited(done))
        #expect(values.values == [8])
    }

    @Test func barrierFlagIsIgnoredOnGlobalQueues() {
        // As in GCD, a barrier on a global queue is an ordinary item: the item after
        // it may start while it runs.
        let queue = DispatchQueue.global(qos: .userInitiated)
        let secondStarted = DispatchSemaphore(value: 0)
        let results = Recorder<Bool>()
        let group = DispatchGroup()
        queue.async(group: group, flags: .barrier) {
            results.append(secondStarted.wait(timeout: deadline()) == .success)
        }
        queue.async(group: group) { secondStarted.signal() }
        #expect(waited(group, seconds: 2 * patienceSeconds))
        #expect(results.values == [true])
    }

    @Test func parallelismIsBoundedByTheHighBand() async {
        await #expect(processExitsWith: .success) {
            startRuntime(twoCoreConfiguration())
            let configuration = Runtime.current.configuration
            let highBand = configuration.workers - configuration.lowQoSWorkers
            let queue = DispatchQueue(label: "test.concurrent.bounded", attributes: .concurrent)
            let meter = OverlapMeter(), gate = Gate(), group = DispatchGroup()
            // Items that hold their worker without a Ringlet wait: no reserve covers them.
            for _ in 0..<8 { queue.async(group: group) { meter.measure { _ = gate.pass() } } }
            #expect(eventually { meter.current == highBand }, "\(meter.current) of \(highBand) ran at once")
            #expect(!eventually(within: 0.1) { meter.current > highBand }, "more items ran than high-band workers")
            gate.open()
            #expect(waited(group))
            #expect(meter.maximum == highBand)
        }
    }

    @Test func concurrentPerformCoversEveryIndexOnce() {
        let counters = SlotCounters(count: 10_000)
        DispatchQueue.concurrentPerform(iterations: counters.count) { counters.increment($0) }
        #expect(counters.slots(notEqualTo: 1) == [])
    }

    @Test func concurrentPerformEdgeCounts() {
        let calls = Recorder<Int>()
        DispatchQueue.concurrentPerform(iterations: 0) { calls.append($0) }
        DispatchQueue.concurrentPerform(iterations: -3) { calls.append($0) }
        #expect(calls.values.isEmpty)
        let caller = ThreadControl.threadID
        let threads = Recorder<Int32>()
        DispatchQueue.concurrentPerform(iterations: 1) {
            calls.append($0)
            threads.append(ThreadControl.threadID)
        }
        #expect(calls.values == [0])
        #expect(threads.values == [caller])
    }

    @Test func concurrentPerformRunsIterationsInParallel() {
        // Iteration 0 waits for iteration 1 to start: the caller cannot run both, so
        // a helper must run iteration 1 while the caller is inside iteration 0.
        let oneStarted = DispatchSemaphore(value: 0)
        let results = Recorder<Bool>()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            if index == 1 {
                oneStarted.signal()
            } else {
                results.append(oneStarted.wait(timeout: deadline()) == .success)
            }
        }
        #expect(results.values == [true])
    }

    @Test func nestedConcurrentPerformFromAWorker() {
        let outer = 6, inner = 500
        let counters = SlotCounters(count: outer * inner)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global(qos: .userInitiated).async {
            DispatchQueue.concurrentPerform(iterations: outer) { o in
                DispatchQueue.concurrentPerform(iterations: inner) { i in counters.increment(o * inner + i) }
            }
            done.signal()
        }
        #expect(waited(done))
        #expect(counters.slots(notEqualTo: 1) == [])
    }

    @Test func concurrentPerformInsideASerialQueueItem() {
        let queue = DispatchQueue(label: "test.concurrent.perform-in-serial")
        let counters = SlotCounters(count: 2_000)
        let total = queue.sync { () -> Int in
            DispatchQueue.concurrentPerform(iterations: counters.count) { counters.increment($0) }
            return counters.slotsEqual(to: 1)
        }
        // Every iteration had returned before concurrentPerform did.
        #expect(total == counters.count)
    }
}
