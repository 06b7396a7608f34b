// A `sync` caller waiting on a busy serial queue is handed the queue's slot by
// whoever frees it — a `sync` caller giving its slot back, a drain that stops, a
// `resume` — and runs its closure on its own thread (as libdispatch does). So chains
// of `sync` make progress even when every pool thread that could drain the queue is
// itself blocked in `sync`: nothing waits for a token that no thread is left to take.

import Testing
@testable import Ringlet

@Suite struct SyncHandOverTests {

    /// Every worker and reserve thread of the band is blocked in `sync` onto a queue
    /// the test's own thread holds, and more items wait behind them. When the test
    /// gives the queue back, the waiters take it in turn and the items chain through
    /// shared serial queues (some with a serial target) until every one has run.
    @Test func syncChainsProgressWithEveryThreadOfTheBandBlocked() async {
        await #expect(processExitsWith: .success) { SyncHandOverScenarios.everyThreadBlockedInSync(rounds: 200) }
    }

    /// The waiter at the head gets the slot when a `sync` caller gives it back: it
    /// runs on its own thread while every thread that could drain the queue is busy.
    @Test func aWaiterRunsOnItsOwnThreadWhenTheHolderGivesTheSlotBack() async {
        await #expect(processExitsWith: .success) { SyncHandOverScenarios.holderGivesTheSlotBack() }
    }

    /// A suspended queue's waiter is handed the slot by `resume`.
    @Test func resumeHandsTheSlotToAWaiter() async {
        await #expect(processExitsWith: .success) { SyncHandOverScenarios.resumeHandsOver() }
    }

    /// The queue's target is busy: the caller takes the queue, waits at the target,
    /// and is handed the target's slot in turn; the closure still runs as an item of
    /// the queue `sync` was called on, on the caller's thread.
    @Test func aCallerWaitsAtABusyTargetHoldingItsQueue() async {
        await #expect(processExitsWith: .success) { SyncHandOverScenarios.busyTarget() }
    }

    /// Waiting at the target, the caller comes after the target's earlier items.
    @Test func aCallerAtTheTargetComesAfterItsEarlierItems() async {
        await #expect(processExitsWith: .success) { SyncHandOverScenarios.targetKeepsItsOrder() }
    }
}

enum SyncHandOverScenarios {
    /// Starts a two-core runtime and keeps both workers of its high band busy (not in
    /// a Ringlet wait, so no reserve thread covers them) until the gate it returns
    /// opens: default-QoS work then has no pool thread, and only a hand-over to a
    /// waiting caller can make progress.
    static func occupiedHighBand() -> Gate? {
        startRuntime(twoCoreConfiguration(grace: 60_000))
        let gate = Gate()
        let busy = AtomicCounter()
        for _ in 0..<2 {
            DispatchQueue.global().async {
                busy.increment()
                gate.pass(within: 60)
            }
        }
        guard eventually({ busy.value == 2 }) else { return nil }
        return gate
    }

    /// Holds `queue` from a thread of its own until the gate it returns opens.
    static func hold(_ queue: DispatchQueue) -> Gate? {
        let holding = DispatchSemaphore(value: 0)
        let release = Gate()
        onOwnThread {
            queue.sync {
                holding.signal()
                release.pass()
            }
        }
        return waited(holding) ? release : nil
    }

    /// A thread of its own syncs onto `queue`, which is busy: once its node waits in
    /// the FIFO, `free` frees the queue; the closure must then run on that thread.
    static func syncRunsOnTheCallersThread(_ queue: DispatchQueue, freedBy free: () -> Void) {
        let caller = Recorder<Int32>()
        let ranOn = Recorder<Int32>()
        let done = onOwnThreads(1) { _ in
            caller.append(ThreadControl.threadID)
            queue.sync { ranOn.append(ThreadControl.threadID) }
        }
        #expect(eventually { queue.pendingCount == 1 })
        free()
        #expect(waited(done))
        #expect(ranOn.values == caller.values, "the closure ran on \(ranOn.values), not the caller's thread")
    }

    static func holderGivesTheSlotBack() {
        guard let band = occupiedHighBand() else { return }
        defer { band.open() }
        let queue = DispatchQueue(label: "test.handover.own-thread")
        guard let release = hold(queue) else { return }
        syncRunsOnTheCallersThread(queue) { release.open() }
    }

    static func resumeHandsOver() {
        guard let band = occupiedHighBand() else { return }
        defer { band.open() }
        let queue = DispatchQueue(label: "test.handover.resume")
        queue.suspend()
        syncRunsOnTheCallersThread(queue) { queue.resume() }
    }

    static func busyTarget() {
        guard let band = occupiedHighBand() else { return }
        defer { band.open() }
        let target = DispatchQueue(label: "test.handover.target")
        let queue = DispatchQueue(label: "test.handover.child", target: target)
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "child")
        guard let release = hold(target) else { return }
        let caller = Recorder<Int32>()
        let seen = Recorder<String>()
        let done = onOwnThreads(1) { _ in
            caller.append(ThreadControl.threadID)
            queue.sync {
                seen.append("\(DispatchQueue.getSpecific(key: key) ?? "no queue") on \(ThreadControl.threadID)")
            }
        }
        // The caller holds its queue and waits in the target's FIFO.
        #expect(eventually { target.pendingCount == 1 })
        release.open()
        #expect(waited(done))
        #expect(seen.values == ["child on \(caller.values.first ?? 0)"])
    }

    /// Items queued on the target before the caller came run before its closure.
    static func targetKeepsItsOrder() {
        startRuntime(twoCoreConfiguration(grace: 60_000))
        let target = DispatchQueue(label: "test.handover.order-target")
        let queue = DispatchQueue(label: "test.handover.order-child", target: target)
        let order = Recorder<String>()
        guard let release = hold(target) else { return }
        target.async { order.append("target item") }
        let done = onOwnThreads(1) { _ in queue.sync { order.append("sync") } }
        #expect(eventually { target.pendingCount == 2 })
        release.open()
        #expect(waited(done))
        #expect(order.values == ["target item", "sync"])
    }

    /// See `syncChainsProgressWithEveryThreadOfTheBandBlocked`. Each of 32 default-QoS
    /// items runs `rounds` rounds of nested syncs, always in the same queue order (so
    /// there is no cycle, only contention): a → b → c, a → (child of t) and d.
    static func everyThreadBlockedInSync(rounds: Int) {
        startRuntime(twoCoreConfiguration(grace: 60_000))
        let statistics = Runtime.statistics
        let band = 2 + statistics.reserve  // the high band's two workers and the reserve
        let a = DispatchQueue(label: "test.chain.a")
        let b = DispatchQueue(label: "test.chain.b")
        let c = DispatchQueue(label: "test.chain.c")
        let d = DispatchQueue(label: "test.chain.d")
        let t = DispatchQueue(label: "test.chain.t")
        let children = (0..<2).map { DispatchQueue(label: "test.chain.t\($0)", target: t) }
        let items = 32
        let runs = SlotCounters(count: items * rounds)
        let done = DispatchGroup()
        let holding = DispatchSemaphore(value: 0)
        let release = Gate()
        onOwnThread {
            a.sync {
                holding.signal()
                release.pass()
            }
        }
        guard waited(holding) else { return }
        for item in 0..<items {
            DispatchQueue.global().async(group: done) {
                for round in 0..<rounds {
                    a.sync {
                        b.sync { c.sync { runs.increment(item * rounds + round) } }
                        children[(item + round) % 2].sync {}
                    }
                    d.sync {}
                }
            }
        }
        // Every thread of the band is blocked in `sync` onto `a`, and items still wait.
        guard eventually({ blockedThreadCount == band }) else {
            Issue.record("only \(blockedThreadCount) of \(band) threads blocked")
            release.open()
            return
        }
        #expect(Runtime.statistics.runnablePerQoS.default > 0)
        release.open()
        #expect(waited(done))
        #expect(runs.slots(notEqualTo: 1).isEmpty, "rounds that did not run exactly once")
    }
}
