// Target queue hierarchies: a serial target serialises everything under it, setTarget
// moves pending items as one unit, specifics and dispatchPrecondition see through
// the hierarchy.

import Testing
@testable import Ringlet

@Suite struct TargetQueueTests {
    @Test func queuesTargetingOneSerialQueueNeverOverlap() {
        let target = DispatchQueue(label: "test.target.serial")
        let children = (0..<4).map { DispatchQueue(label: "test.target.child\($0)", target: target) }
            + [DispatchQueue(label: "test.target.concurrent-child", attributes: .concurrent, target: target)]
        let meter = OverlapMeter()
        let order = (0..<children.count).map { _ in Recorder<Int>() }
        let group = DispatchGroup()
        for index in 0..<400 {
            for (child, queue) in children.enumerated() {
                queue.async(group: group) {
                    meter.measure { if index % 50 == 0 { sleepMilliseconds(1) } }
                    order[child].append(index)
                }
            }
        }
        #expect(waited(group))
        #expect(meter.maximum == 1)
        for child in 0..<4 {
            #expect(order[child].values == Array(0..<400), "serial child \(child) was reordered")
        }
        #expect(order[4].count == 400)
    }

    @Test func suspendedTargetHoldsItsChildren() {
        let target = DispatchQueue(label: "test.target.suspended")
        let child = DispatchQueue(label: "test.target.held", target: target)
        let ran = AtomicCounter()
        target.suspend()
        let group = DispatchGroup()
        for _ in 0..<5 { child.async(group: group) { ran.increment() } }
        #expect(group.wait(timeout: .now() + 0.1) == .timedOut)
        #expect(ran.value == 0)
        target.resume()
        #expect(waited(group))
        #expect(ran.value == 5)
    }

    @Test func setTargetBeforeActivationRedirectsItems() {
        let key = DispatchSpecificKey<String>()
        let destination = DispatchQueue(label: "test.target.destination")
        destination.setSpecific(key: key, value: "destination")
        let queue = DispatchQueue(label: "test.target.inactive", attributes: .initiallyInactive)
        let seen = Recorder<String?>()
        let group = DispatchGroup()
        for _ in 0..<3 {
            queue.async(group: group) {
                dispatchPrecondition(condition: .onQueue(destination))
                seen.append(DispatchQueue.getSpecific(key: key))
            }
        }
        queue.setTarget(queue: destination)
        queue.activate()
        #expect(waited(group))
        #expect(seen.values == ["destination", "destination", "destination"])
    }

    @Test func setTargetMovesPendingItemsAsOneUnit() {
        let key = DispatchSpecificKey<String>()
        let first = DispatchQueue(label: "test.target.first")
        let second = DispatchQueue(label: "test.target.second")
        first.setSpecific(key: key, value: "first")
        second.setSpecific(key: key, value: "second")
        let queue = DispatchQueue(label: "test.target.moving", target: first)

        // Keep `first` busy so that `queue`'s wake-up waits in first's FIFO.
        let busy = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        first.async {
            busy.signal()
            _ = release.wait(timeout: deadline())
        }
        #expect(waited(busy))
        let seen = Recorder<(Int, String?)>()
        let group = DispatchGroup()
        for index in 0..<20 {
            queue.async(group: group) { seen.append((index, DispatchQueue.getSpecific(key: key))) }
        }
        queue.setTarget(queue: second)
        release.signal()
        #expect(waited(group))
        let values = seen.values
        #expect(values.map(\.0) == Array(0..<20))
        #expect(values.allSatisfy { $0.1 == "second" }, "items ran on the old target: \(values.map(\.1))")
    }

    @Test func getSpecificWalksTheHierarchy() {
        let key = DispatchSpecificKey<String>()
        let number = DispatchSpecificKey<Int>()
        let root = DispatchQueue(label: "test.target.specific-root")
        let middle = DispatchQueue(label: "test.target.specific-middle", target: root)
        let leaf = DispatchQueue(label: "test.target.specific-leaf", target: middle)
        root.setSpecific(key: key, value: "root")
        root.setSpecific(key: number, value: 1)
        middle.setSpecific(key: number, value: 2)

        // The instance getter reads the queue's own table only.
        #expect(leaf.getSpecific(key: key) == nil)
        #expect(root.getSpecific(key: key) == "root")
        #expect(middle.getSpecific(key: number) == 2)

        // The class getter reads the current queue, then its targets.
        let fromLeaf = leaf.sync { (DispatchQueue.getSpecific(key: key), DispatchQueue.getSpecific(key: number)) }
        #expect(fromLeaf.0 == "root")
        #expect(fromLeaf.1 == 2)
        leaf.setSpecific(key: key, value: "leaf")
        #expect(leaf.sync { DispatchQueue.getSpecific(key: key) } == "leaf")
        leaf.setSpecific(key: key, value: nil)
        #expect(leaf.getSpecific(key: key) == nil)
        #expect(leaf.sync { DispatchQueue.getSpecific(key: key) } == "root")

        // Asynchronous items see the same.
        let seen = Recorder<Int?>()
        let done = DispatchSemaphore(value: 0)
        leaf.async {
            seen.append(DispatchQueue.getSpecific(key: number))
            done.signal()
        }
        #expect(waited(done))
        #expect(seen.values == [2])
        // Outside any queue there is nothing (the test thread is not the main thread).
        if !ThreadContext.current.isMainThread {
            #expect(DispatchQueue.getSpecific(key: key) == nil)
        }
    }

    @Test func specificKeysAreDistinctSlots() {
        let a = DispatchSpecificKey<Int>(), b = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "test.target.keys")
        queue.setSpecific(key: a, value: 1)
        queue.setSpecific(key: b, value: 2)
        queue.setSpecific(key: a, value: 3)
        #expect(queue.getSpecific(key: a) == 3)
        #expect(queue.getSpecific(key: b) == 2)
    }

    @Test func dispatchPreconditionSeesThroughTargets() {
        let root = DispatchQueue(label: "test.target.pre-root")
        let leaf = DispatchQueue(label: "test.target.pre-leaf", target: root)
        let other = DispatchQueue(label: "test.target.pre-other")
        let concurrent = DispatchQueue(label: "test.target.pre-concurrent", attributes: .concurrent)
        let results = Recorder<(String, Bool)>()
        let group = DispatchGroup()
        @Sendable func record(_ name: String, _ predicate: DispatchPredicate) {
            results.append((name, predicate.holds(in: ThreadContext.current)))
        }
        leaf.async(group: group) {
            record("onQueue(leaf)", .onQueue(leaf))
            record("onQueue(root)", .onQueue(root))
            record("asBarrier(root)", .onQueueAsBarrier(root))
            record("notOnQueue(other)", .notOnQueue(other))
            record("!onQueue(other)", .onQueue(other))
            record("!notOnQueue(root)", .notOnQueue(root))
            // The trapping form passes too.
            dispatchPrecondition(condition: .onQueue(root))
            dispatchPrecondition(condition: .notOnQueue(other))
        }
        concurrent.async(group: group) {
            record("onQueue(concurrent)", .onQueue(concurrent))
            record("!asBarrier(concurrent)", .onQueueAsBarrier(concurrent))
        }
        concurrent.async(group: group, flags: .barrier) {
            record("barrier asBarrier(concurrent)", .onQueueAsBarrier(concurrent))
        }
        #expect(waited(group))
        record("!onQueue(leaf) outside", .onQueue(leaf))
        record("notOnQueue(leaf) outside", .notOnQueue(leaf))
        for (name, holds) in results.values {
            #expect(holds == !name.hasPrefix("!"), "\(name)")
        }
        #expect(results.count == 11)
    }

    @Test func queueQoSComesFromTheTargetWhenUnset() {
        let utility = DispatchQueue(label: "test.target.qos-utility", qos: .utility)
        let child = DispatchQueue(label: "test.target.qos-child", target: utility)
        let own = DispatchQueue(label: "test.target.qos-own", qos: .userInitiated, target: utility)
        #expect(child.floorPriority == QoSPriority(.utility))
        #expect(own.floorPriority == QoSPriority(.userInitiated))
        let levels = Recorder<QoSLevel>()
        let group = DispatchGroup()
        child.async(group: group) { levels.append(currentLevel) }
        #expect(waited(group))
        #expect(levels.values == [.utility])
    }
}
