// Deep target chains: a queue whose target chain is 10,000 serial queues long runs
// its items (Dispatch handles such chains; a drain that recursed one level per queue
// overflowed a worker's stack at about 1,000), keeps its order and its specifics,
// and building the chain does not walk it once per queue.

import Testing
@testable import Ringlet

@Suite struct DeepTargetChainTests {
    @Test func itemsAtTheBottomOfA10000DeepChainRun() async {
        await #expect(processExitsWith: .success) { DeepTargetChainScenarios.bottomItemsRun(depth: 10_000) }
    }

    @Test func itemsAlongA10000DeepChainKeepTheirOrder() async {
        await #expect(processExitsWith: .success) { DeepTargetChainScenarios.itemsAlongTheChain(depth: 10_000) }
    }

    @Test func syncOntoTheBottomOfA10000DeepChain() async {
        await #expect(processExitsWith: .success) { DeepTargetChainScenarios.syncAtTheBottom(depth: 10_000) }
    }

    /// The last reference to the chain goes in a pool thread's item: each queue's
    /// release frees its target in turn.
    @Test func aWorkerReleasesA10000DeepChain() async {
        await #expect(processExitsWith: .success) { DeepTargetChainScenarios.releasedOnAWorker(depth: 10_000) }
    }

    /// The same on a thread Ringlet knows nothing of, with a small stack.
    @Test func aThreadOfItsOwnReleasesA10000DeepChain() async {
        await #expect(processExitsWith: .success) { DeepTargetChainScenarios.releasedOnAThreadOfItsOwn(depth: 10_000) }
    }

    @Test func aSuspendedQueueHalfwayDownTheChainHoldsTheQueuesBelow() async {
        await #expect(processExitsWith: .success) { DeepTargetChainScenarios.suspendedHalfway(depth: 10_000) }
    }
}

enum DeepTargetChainScenarios {
    /// `depth` serial queues, each targeting the one before; the first targets the
    /// default global queue. The last one is the bottom of the chain.
    static func chain(depth: Int, label: String) -> [DispatchQueue] {
        var queues: [DispatchQueue] = []
        queues.reserveCapacity(depth)
        for index in 0..<depth {
            queues.append(DispatchQueue(label: "\(label).\(index)", target: queues.last))
        }
        return queues
    }

    static func bottomItemsRun(depth: Int) {
        startRuntime(twoCoreConfiguration())
        let queues = chain(depth: depth, label: "test.deep.bottom")
        let top = DispatchSpecificKey<String>()
        queues[0].setSpecific(key: top, value: "top")
        let seen = Recorder<Int>()
        let specifics = Recorder<String>()
        let group = DispatchGroup()
        for index in 0..<100 {
            queues[depth - 1].async(group: group) {
                seen.append(index)
                specifics.append(DispatchQueue.getSpecific(key: top) ?? "none")
            }
        }
        #expect(waited(group))
        #expect(seen.values == Array(0..<100))
        #expect(specifics.values == Array(repeating: "top", count: 100))
    }

    /// An item on every hundredth queue, pushed from the bottom up while the top is
    /// suspended: the top then runs them in the order its children's tokens reached it.
    static func itemsAlongTheChain(depth: Int) {
        startRuntime(twoCoreConfiguration())
        let queues = chain(depth: depth, label: "test.deep.along")
        let seen = Recorder<Int>()
        let group = DispatchGroup()
        queues[0].suspend()
        let levels = Array(stride(from: depth - 1, through: 0, by: -100))
        for level in levels {
            queues[level].async(group: group) { seen.append(level) }
            // A second item behind it on the same queue comes after the first.
            queues[level].async(group: group) { seen.append(-level - 1) }
        }
        queues[0].resume()
        #expect(waited(group))
        #expect(seen.count == 2 * levels.count)
        // Per queue, FIFO order.
        for level in levels {
            let first = seen.values.firstIndex(of: level)
            let second = seen.values.firstIndex(of: -level - 1)
            #expect(first != nil && second != nil && first! < second!, "queue \(level)'s items were reordered")
        }
    }

    static func syncAtTheBottom(depth: Int) {
        startRuntime(twoCoreConfiguration())
        let queues = chain(depth: depth, label: "test.deep.sync")
        let group = DispatchGroup()
        let ran = AtomicCounter()
        queues[depth - 1].async(group: group) { ran.increment() }
        var inside = false
        queues[depth - 1].sync { inside = true }
        #expect(inside)
        #expect(waited(group))
        #expect(ran.value == 1)
        // An async item on the bottom that syncs onto a queue outside the chain.
        let outside = DispatchQueue(label: "test.deep.outside")
        let nested = DispatchSemaphore(value: 0)
        queues[depth - 1].async { outside.sync { _ = nested.signal() } }
        #expect(waited(nested))
    }

    static func releasedOnAWorker(depth: Int) {
        startRuntime(twoCoreConfiguration())
        let bottom = Holder(chain(depth: depth, label: "test.deep.released").last)
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            bottom.value = nil
            released.signal()
        }
        #expect(waited(released))
    }

    static func releasedOnAThreadOfItsOwn(depth: Int) {
        startRuntime(twoCoreConfiguration())
        let bottom = Holder(chain(depth: depth, label: "test.deep.foreign").last)
        let released = DispatchSemaphore(value: 0)
        do {
            try ThreadControl.start(stackBytes: 256 * 1024) {
                bottom.value = nil
                released.signal()
            }
        } catch {
            Issue.record("could not start a thread: \(error)")
            return
        }
        #expect(waited(released))
    }

    final class Holder: @unchecked Sendable {
        var value: DispatchQueue?
        init(_ value: DispatchQueue?) { self.value = value }
    }

    static func suspendedHalfway(depth: Int) {
        startRuntime(twoCoreConfiguration())
        let queues = chain(depth: depth, label: "test.deep.suspended")
        let middle = queues[depth / 2]
        middle.suspend()
        let below = DispatchSemaphore(value: 0)
        let above = DispatchSemaphore(value: 0)
        queues[depth - 1].async { below.signal() }
        queues[depth / 4].async { above.signal() }
        #expect(waited(above))
        // The queue above ran; the one below waits for `resume` (the runtime counts
        // what it ran: once `above` ran and the pool went idle, nothing is pending
        // that could still run the bottom item).
        #expect(eventually { queues[depth - 1].pendingCount == 1 && middle.pendingCount == 1 })
        #expect(below.wait(timeout: .now()) == .timedOut)
        middle.resume()
        #expect(waited(below))
    }
}
