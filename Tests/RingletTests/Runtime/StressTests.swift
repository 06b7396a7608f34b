// Stress: many producers, a million items, every item exactly once; serial queues
// stay FIFO per producer and exclusive under load; sync and async mix on one queue.

import Testing
@testable import Ringlet

/// Per-(queue, producer) "last index seen", touched only by items of that serial
/// queue, so the queue's exclusivity is its only protection.
private final class SequenceCheck: @unchecked Sendable {
    private let last: UnsafeMutablePointer<Int>
    let violations = AtomicCounter()
    let producers: Int

    init(queues: Int, producers: Int) {
        self.producers = producers
        last = .allocate(capacity: queues * producers)
        last.initialize(repeating: -1, count: queues * producers)
    }

    deinit { last.deallocate() }

    func see(queue: Int, producer: Int, index: Int) {
        let slot = last + (queue * producers + producer)
        if index <= slot.pointee { violations.increment() }
        slot.pointee = index
    }
}

@Suite struct StressTests {
    /// In a child process: 10^6 items at default QoS in the shared test process would
    /// queue every other suite's default-QoS work behind them for seconds.
    @Test func eightProducersAMillionItemsEachRunsOnce() async {
        await #expect(processExitsWith: .success) { Self.eightProducersAMillionItems() }
    }

    static func eightProducersAMillionItems() {
        // A fifth of the items under a sanitizer: the instrumented run would take minutes
        // (`make soak` runs 10^7 items on the release build).
        let producers = 8, perProducer = sanitizerActive ? 25_000 : 125_000
        let counters = SlotCounters(count: producers * perProducer)
        let serial = (0..<4).map { DispatchQueue(label: "test.stress.serial\($0)") }
        let concurrent = (0..<2).map { DispatchQueue(label: "test.stress.concurrent\($0)", attributes: .concurrent) }
        let sequence = SequenceCheck(queues: serial.count, producers: producers)
        let meters = serial.map { _ in OverlapMeter() }
        let items = DispatchGroup()
        let start = monotonicNanoseconds

        let producing = onOwnThreads(producers) { producer in
            let base = producer * perProducer
            for index in 0..<perProducer {
                let slot = base + index
                switch index % 8 {
                case 0, 1, 2, 3:
                    let q = (index + producer) % serial.count
                    serial[q].async(group: items) {
                        meters[q].measure { sequence.see(queue: q, producer: producer, index: index) }
                        counters.increment(slot)
                    }
                case 4, 5:
                    concurrent[index % 2].async(group: items) { counters.increment(slot) }
                case 6:
                    DispatchQueue.global(qos: .userInitiated).async(group: items) { counters.increment(slot) }
                default:
                    DispatchQueue.global(qos: .utility).async(group: items) { counters.increment(slot) }
                }
            }
        }
        #expect(producing.wait(timeout: deadline(6 * patienceSeconds)) == .success, "producers did not finish")
        #expect(items.wait(timeout: deadline(6 * patienceSeconds)) == .success, "items did not finish")
        let seconds = secondsSince(start)
        #expect(counters.slots(notEqualTo: 1) == [], "items lost or run twice")
        #expect(counters.slotsEqual(to: 1) == producers * perProducer)
        #expect(sequence.violations.value == 0, "a serial queue reordered a producer's items")
        #expect(meters.allSatisfy { $0.maximum == 1 }, "a serial queue ran two items at once")
        #expect(seconds < 6 * patienceSeconds, "\(producers * perProducer) items took \(seconds) s")
    }

    @Test func syncAndAsyncMixOnOneSerialQueue() {
        let queue = DispatchQueue(label: "test.stress.mixed")
        let threads = 8, operations = 5_000
        final class Box: @unchecked Sendable { var value = 0 }
        let box = Box()
        let meter = OverlapMeter()
        let items = DispatchGroup()
        let producing = onOwnThreads(threads) { thread in
            for index in 0..<operations {
                if (index + thread) % 3 == 0 {
                    let seen = queue.sync { meter.measure { () -> Int in
                        box.value += 1
                        return box.value
                    } }
                    precondition(seen > 0)
                } else {
                    queue.async(group: items) { meter.measure { box.value += 1 } }
                }
            }
        }
        #expect(producing.wait(timeout: deadline(6 * patienceSeconds)) == .success)
        #expect(items.wait(timeout: deadline(6 * patienceSeconds)) == .success)
        #expect(queue.sync { box.value } == threads * operations)
        #expect(meter.maximum == 1)
    }

    @Test func manyQueuesUnderSharedSerialTargets() {
        let targets = (0..<4).map { DispatchQueue(label: "test.stress.target\($0)") }
        let queueCount = 1_000, perQueue = 50
        let queues = (0..<queueCount).map {
            DispatchQueue(label: "test.stress.leaf\($0)", target: targets[$0 % targets.count])
        }
        let counters = SlotCounters(count: queueCount * perQueue)
        let sequence = SequenceCheck(queues: queueCount, producers: 1)
        let meters = targets.map { _ in OverlapMeter() }
        let items = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: 4) { part in
            for index in 0..<perQueue {
                for q in stride(from: part, to: queueCount, by: 4) {
                    queues[q].async(group: items) {
                        meters[q % targets.count].measure { sequence.see(queue: q, producer: 0, index: index) }
                        counters.increment(q * perQueue + index)
                    }
                }
            }
        }
        #expect(items.wait(timeout: deadline(6 * patienceSeconds)) == .success)
        #expect(counters.slots(notEqualTo: 1) == [])
        #expect(sequence.violations.value == 0)
        #expect(meters.allSatisfy { $0.maximum == 1 }, "a serial target ran two of its queues at once")
    }
}
