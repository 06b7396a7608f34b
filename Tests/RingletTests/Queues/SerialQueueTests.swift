// Serial queues: FIFO, one item at a time, and `sync` (fast path on the caller's
// thread, slow path behind queued work, values and typed errors through both).

import Testing
@testable import Ringlet

@Suite struct SerialQueueTests {
    @Test func itemsRunInSubmissionOrder() {
        let queue = DispatchQueue(label: "test.serial.fifo")
        let order = Recorder<Int>()
        let group = DispatchGroup()
        for index in 0..<5_000 {
            queue.async(group: group) { order.append(index) }
        }
        #expect(waited(group))
        #expect(order.values == Array(0..<5_000))
    }

    /// `async` moves its closure into the item's node: what the closure captures lives
    /// until the item ran and is freed then — not kept (a leak), not released before
    /// the item ran or twice (a crash here, or under AddressSanitizer).
    @Test func aClosuresCapturesLiveUntilTheItemRanAndAreFreedThen() {
        final class Capture: Sendable {
            let value: Int
            init(_ value: Int) { self.value = value }
        }
        let queue = DispatchQueue(label: "test.serial.captures")
        let sum = AtomicCounter()
        weak var weakCapture: Capture?
        queue.suspend()
        do {
            let capture = Capture(7)
            weakCapture = capture
            for _ in 0..<100 { queue.async { sum.increment(by: capture.value) } }
        }
        #expect(weakCapture != nil, "the captures of items not yet run were freed")
        queue.resume()
        queue.sync {}
        #expect(sum.value == 700)
        #expect(eventually { weakCapture == nil }, "the captures outlived their items: a reference was kept")
    }

    @Test func neverRunsTwoItemsAtOnce() {
        let queue = DispatchQueue(label: "test.serial.exclusive")
        let meter = OverlapMeter()
        let group = DispatchGroup()
        // Submitted from several threads at once, and some items sleep, so that a
        // queue that let a second worker in would be caught overlapping.
        DispatchQueue.concurrentPerform(iterations: 4) { producer in
            for index in 0..<500 {
                queue.async(group: group) {
                    meter.measure { if index % 100 == 0 { sleepMilliseconds(1) } }
                }
            }
            _ = producer
        }
        #expect(waited(group))
        #expect(meter.maximum == 1)
    }

    @Test func eachProducerKeepsItsOrder() {
        let queue = DispatchQueue(label: "test.serial.producers")
        let producers = 4, perProducer = 2_000
        let seen = Recorder<(producer: Int, index: Int)>()
        let group = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: producers) { producer in
            for index in 0..<perProducer {
                queue.async(group: group) { seen.append((producer, index)) }
            }
        }
        #expect(waited(group))
        let values = seen.values
        #expect(values.count == producers * perProducer)
        for producer in 0..<producers {
            let indices = values.filter { $0.producer == producer }.map(\.index)
            #expect(indices == Array(0..<perProducer), "producer \(producer) was reordered")
        }
    }

    @Test func labelAndQoSAreKept() {
        let plain = DispatchQueue(label: "test.serial.label")
        let utility = DispatchQueue(label: "test.serial.utility", qos: .utility)
        #expect(plain.label == "test.serial.label")
        #expect(plain.qos == .unspecified)
        #expect(utility.qos == .utility)
        #expect(DispatchQueue.global(qos: .background).label == "com.apple.root.background-qos")
        #expect(DispatchQueue.main.label == "com.apple.main-thread")
    }

    @Test func syncReturnsTheClosuresValue() {
        let queue = DispatchQueue(label: "test.serial.sync-value")
        let number = queue.sync { 6 * 7 }
        let text = queue.sync { "ring" + "let" }
        let pair: (Int, String) = queue.sync { (1, "one") }
        #expect(number == 42)
        #expect(text == "ringlet")
        #expect(pair.0 == 1 && pair.1 == "one")
    }

    @Test func syncRunsOnTheCallingThreadWhenIdle() {
        let queue = DispatchQueue(label: "test.serial.sync-thread")
        let caller = ThreadControl.threadID
        let runner = queue.sync { ThreadControl.threadID }
        #expect(runner == caller)
        // Inside, the caller runs as the queue.
        queue.sync { dispatchPrecondition(condition: .onQueue(queue)) }
        dispatchPrecondition(condition: .notOnQueue(queue))
    }

    @Test func syncRethrowsTypedErrors() {
        let queue = DispatchQueue(label: "test.serial.sync-throws")
        do throws(ProbeError) {
            _ = try queue.sync { () throws(ProbeError) -> Int in throw .failed(7) }
            Issue.record("sync did not rethrow")
        } catch {
            #expect(error == .failed(7))
        }
        // Untyped throws still compile and rethrow (source compatibility with Dispatch).
        #expect(throws: ProbeError.failed(8)) {
            try queue.sync { () throws -> Void in throw ProbeError.failed(8) }
        }
        // The queue is usable afterwards: the slot taken by the throwing sync was given back.
        #expect(queue.sync { 1 } == 1)
    }

    @Test func syncWaitsBehindQueuedWork() {
        let queue = DispatchQueue(label: "test.serial.sync-slow")
        let events = Recorder<String>()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        queue.async {
            started.signal()
            _ = release.wait(timeout: deadline())
            events.append("async")
        }
        #expect(waited(started))
        // Release the running item only once our sync is queued behind it, so the
        // slow path (a queued waiter node) is what runs it.
        DispatchQueue.global().async {
            eventually { queue.pendingCount == 1 }
            release.signal()
        }
        let value = queue.sync { () -> Int in
            events.append("sync")
            return 99
        }
        #expect(value == 99)
        #expect(events.values == ["async", "sync"])
    }

    @Test func slowPathSyncRethrowsTypedErrors() {
        let queue = DispatchQueue(label: "test.serial.sync-slow-throws")
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        queue.async {
            started.signal()
            _ = release.wait(timeout: deadline())
        }
        #expect(waited(started))
        DispatchQueue.global().async {
            eventually { queue.pendingCount == 1 }
            release.signal()
        }
        do throws(ProbeError) {
            try queue.sync { () throws(ProbeError) -> Void in throw .failed(3) }
            Issue.record("slow-path sync did not rethrow")
        } catch {
            #expect(error == .failed(3))
        }
    }

    @Test func syncFromAnotherQueuesItem() {
        let outer = DispatchQueue(label: "test.serial.outer")
        let inner = DispatchQueue(label: "test.serial.inner")
        let done = DispatchSemaphore(value: 0)
        let result = Recorder<Int>()
        let outerHeld = Recorder<Bool>()
        outer.async {
            let value = inner.sync { () -> Int in
                dispatchPrecondition(condition: .onQueue(inner))
                // Running inner's work inside outer's item: this thread still holds
                // outer (GCD's dispatch_assert_queue(outer) passes here).
                outerHeld.append(DispatchPredicate.onQueue(outer).holds(in: ThreadContext.current))
                return 5
            }
            result.append(value)
            done.signal()
        }
        #expect(waited(done))
        #expect(result.values == [5])
        #expect(outerHeld.values == [true], "the queue whose item called sync is no longer seen as held")
    }

    @Test func asyncAndSyncInterleaveInOrder() {
        let queue = DispatchQueue(label: "test.serial.mixed")
        let order = Recorder<Int>()
        for index in 0..<200 {
            if index % 10 == 9 {
                queue.sync { order.append(index) }
            } else {
                queue.async { order.append(index) }
            }
        }
        queue.sync {}
        #expect(order.values == Array(0..<200))
    }

    @Test func syncWithWorkItemRunsIt() {
        let queue = DispatchQueue(label: "test.serial.sync-item")
        let ran = AtomicCounter()
        let item = DispatchWorkItem { ran.increment() }
        queue.sync(execute: item)
        #expect(ran.value == 1)
        #expect(item.wait(timeout: .now()) == .success)
    }
}
