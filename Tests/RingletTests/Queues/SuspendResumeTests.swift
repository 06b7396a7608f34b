// Suspend and resume, and queues created inactive. "Nothing runs" is checked over a
// short window (100 ms); everything that must happen is waited for with a bound.

import Testing
@testable import Ringlet

/// How long a test watches for something that must not happen.
private let quietWindow = 0.1

@Suite struct SuspendResumeTests {
    @Test func suspendStopsAtTheNextItemBoundary() {
        let queue = DispatchQueue(label: "test.suspend.boundary")
        let events = Recorder<String>()
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        queue.async(group: group) {
            running.signal()
            _ = release.wait(timeout: deadline())
            events.append("first-finished")
        }
        for index in 0..<3 {
            queue.async(group: group) { events.append("next\(index)") }
        }
        #expect(waited(running))
        queue.suspend()
        release.signal()
        // The running item is not preempted: it finishes...
        #expect(eventually { events.count == 1 })
        // ...and nothing after it starts while the queue is suspended.
        #expect(group.wait(timeout: .now() + quietWindow) == .timedOut)
        #expect(events.values == ["first-finished"])
        queue.resume()
        #expect(waited(group))
        #expect(events.values == ["first-finished", "next0", "next1", "next2"])
    }

    @Test func suspensionsAreCounted() {
        let queue = DispatchQueue(label: "test.suspend.counted")
        let ran = AtomicCounter()
        let group = DispatchGroup()
        queue.suspend()
        queue.suspend()
        queue.async(group: group) { ran.increment() }
        queue.resume()
        #expect(group.wait(timeout: .now() + quietWindow) == .timedOut)
        #expect(ran.value == 0)
        queue.resume()
        #expect(waited(group))
        #expect(ran.value == 1)
    }

    @Test func suspendedQueueMakesSyncWait() {
        let queue = DispatchQueue(label: "test.suspend.sync")
        queue.suspend()
        let done = DispatchSemaphore(value: 0)
        let value = Recorder<Int>()
        DispatchQueue.global().async {
            value.append(queue.sync { 3 })
            done.signal()
        }
        #expect(done.wait(timeout: .now() + quietWindow) == .timedOut)
        #expect(value.values.isEmpty)
        queue.resume()
        #expect(waited(done))
        #expect(value.values == [3])
    }

    @Test func suspendedConcurrentQueueStartsNothing() {
        let queue = DispatchQueue(label: "test.suspend.concurrent", attributes: .concurrent)
        let ran = AtomicCounter()
        let group = DispatchGroup()
        queue.suspend()
        for _ in 0..<10 { queue.async(group: group) { ran.increment() } }
        #expect(group.wait(timeout: .now() + quietWindow) == .timedOut)
        #expect(ran.value == 0)
        queue.resume()
        #expect(waited(group))
        #expect(ran.value == 10)
    }

    @Test func initiallyInactiveRunsNothingUntilActivate() {
        let queue = DispatchQueue(label: "test.inactive.activate", attributes: .initiallyInactive)
        let order = Recorder<Int>()
        let group = DispatchGroup()
        for index in 0..<10 { queue.async(group: group) { order.append(index) } }
        #expect(group.wait(timeout: .now() + quietWindow) == .timedOut)
        #expect(order.values.isEmpty)
        queue.activate()
        #expect(waited(group))
        #expect(order.values == Array(0..<10))
        // A second activate is a no-op, and the queue keeps working.
        queue.activate()
        #expect(queue.sync { 1 } == 1)
    }

    @Test func inactiveConcurrentQueueActivates() {
        let queue = DispatchQueue(label: "test.inactive.concurrent",
                                  attributes: [.concurrent, .initiallyInactive])
        let ran = AtomicCounter()
        let group = DispatchGroup()
        for _ in 0..<10 { queue.async(group: group) { ran.increment() } }
        #expect(group.wait(timeout: .now() + quietWindow) == .timedOut)
        queue.activate()
        #expect(waited(group))
        #expect(ran.value == 10)
    }

    @Test func resumeOnAnInactiveQueueActivatesIt() {
        let queue = DispatchQueue(label: "test.inactive.resume", attributes: .initiallyInactive)
        let ran = AtomicCounter()
        let group = DispatchGroup()
        queue.async(group: group) { ran.increment() }
        queue.resume()
        #expect(waited(group))
        #expect(ran.value == 1)
    }

    @Test func suspendedWhileInactiveNeedsActivateAndResume() {
        let queue = DispatchQueue(label: "test.inactive.suspended", attributes: .initiallyInactive)
        let ran = AtomicCounter()
        let group = DispatchGroup()
        queue.suspend()
        queue.async(group: group) { ran.increment() }
        queue.activate()
        #expect(group.wait(timeout: .now() + quietWindow) == .timedOut)
        #expect(ran.value == 0)
        queue.resume()
        #expect(waited(group))
        #expect(ran.value == 1)
    }

    @Test func suspendFromInsideAnItem() {
        let queue = DispatchQueue(label: "test.suspend.inside")
        let events = Recorder<String>()
        let group = DispatchGroup()
        queue.async(group: group) {
            queue.suspend()
            events.append("suspender")
        }
        queue.async(group: group) { events.append("after") }
        #expect(eventually { events.count == 1 })
        #expect(group.wait(timeout: .now() + quietWindow) == .timedOut)
        #expect(events.values == ["suspender"])
        queue.resume()
        #expect(waited(group))
        #expect(events.values == ["suspender", "after"])
    }

    @Test func itemsSubmittedWhileSuspendedKeepTheirOrder() {
        let queue = DispatchQueue(label: "test.suspend.order")
        let order = Recorder<Int>()
        let group = DispatchGroup()
        for index in 0..<50 { queue.async(group: group) { order.append(index) } }
        queue.suspend()
        for index in 50..<100 { queue.async(group: group) { order.append(index) } }
        queue.resume()
        #expect(waited(group))
        #expect(order.values == Array(0..<100))
    }
}
