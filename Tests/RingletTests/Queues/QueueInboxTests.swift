// The lock-free queue inbox (Queues/QueueInbox.swift): producers that push without the
// queue's lock, a producer caught between its exchange and its link, and FIFO order,
// barriers, suspension and sync through it. The windows are made as long as a test
// likes with the inbox's debug hook (`InboxHook`), so nothing here depends on timing.

import Synchronization
import Testing
@testable import Ringlet

@Suite(.serialized) struct QueueInboxTests {
    /// Holds chosen producers inside the exchange-to-link window until released, and
    /// records the consumers that found themselves waiting on such a window.
    final class Window: @unchecked Sendable {
        let held = Atomic<Int>(0)
        let release = Gate()
        let waitedAfter = Atomic<UInt>(0)
        /// The thread whose next push is held (0: none).
        let holdThread = Atomic<Int32>(0)
        /// The node the held push swapped in after (0: the inbox was empty).
        let heldPrevious = Atomic<UInt>(0)
        /// The CPU-time clock of the first consumer that waited on the held link, and
        /// how many times consumers looked at that link.
        let waiterClock = Mutex<Int32?>(nil)
        let waiterLooks = Atomic<Int>(0)

        func hook(_ point: InboxHook.Point) {
            switch point {
            case .exchanged(_, let previous):
                guard holdThread.load(ordering: .acquiring) == ThreadControl.threadID else { return }
                holdThread.store(0, ordering: .releasing)
                heldPrevious.store(previous, ordering: .releasing)
                held.wrappingAdd(1, ordering: .acquiringAndReleasing)
                release.pass()
            case .waitingForLink(let after):
                // Only a pool thread's wait, the drainer's: a report or dump that lists the
                // queue's pending work (the stall watch under a loaded machine) takes the
                // inbox too, on the manager or a test's thread.
                guard ThreadContext.currentIfPresent?.worker != nil else { return }
                if after != 0, after == heldPrevious.load(ordering: .acquiring) {
                    waiterClock.withLock { if $0 == nil { $0 = ThreadControl.cpuClock } }
                    waiterLooks.wrappingAdd(1, ordering: .relaxed)
                    waitedAfter.store(after, ordering: .releasing)
                }
            case .markingTokenOut:
                break
            }
        }
    }

    /// Per-producer positions, touched only by the items of one serial queue.
    final class Cursors: @unchecked Sendable {
        var values: [Int]
        init(count: Int) { values = [Int](repeating: 0, count: count) }
    }

    /// The live dump counts what the inbox holds without taking it in: it never waits for
    /// a producer between its exchange and its link (it did, holding the queue registry,
    /// and a test whose held producer dumped on a timeout hung the process).
    @Test func aDumpNeverWaitsForAProducerBetweenExchangeAndLink() {
        let window = Window()
        InboxHook.hook.install { window.hook($0) }
        defer { InboxHook.hook.install(nil) }
        let queue = DispatchQueue(label: "test.inbox.dump")
        let group = DispatchGroup()
        let blocker = Gate()
        let started = Gate()
        queue.async(group: group) { started.open(); blocker.pass() }
        #expect(started.pass())
        queue.async(group: group) {}
        let producerDone = Gate()
        onOwnThread {
            window.holdThread.store(ThreadControl.threadID, ordering: .releasing)
            queue.async(group: group) {}
            producerDone.open()
        }
        #expect(eventually { window.held.load(ordering: .acquiring) == 1 })
        let dumped = Gate()
        let text = Mutex<String>("")
        onOwnThread {
            let dump = Runtime.dump()
            text.withLock { $0 = dump }
            dumped.open()
        }
        #expect(dumped.pass(), "the dump waited for the producer held before its link")
        let dump = text.withLock { $0 }
        #expect(dump.contains("queue 'test.inbox.dump': 1 item(s)"), "\(dump)")
        window.release.open()
        blocker.open()
        #expect(producerDone.pass())
        #expect(waited(group))
    }

    @Test func aProducerHeldBetweenExchangeAndLinkLosesAndReordersNothing() {
        let window = Window()
        InboxHook.hook.install { window.hook($0) }
        defer { InboxHook.hook.install(nil) }
        let queue = DispatchQueue(label: "test.inbox.window")
        let order = Recorder<Int>()
        let group = DispatchGroup()
        // The drainer sits in item 0 (a gate), so pushes 1... find a node before them
        // and join the chain without the lock; the drainer takes the chain after item 0.
        let blocker = Gate()
        let started = Gate()
        queue.async(group: group) { started.open(); blocker.pass(); order.append(0) }
        #expect(started.pass())
        queue.async(group: group) { order.append(1) }
        // Push 2 from a thread held between its exchange and its link.
        let producerDone = Gate()
        onOwnThread {
            window.holdThread.store(ThreadControl.threadID, ordering: .releasing)
            queue.async(group: group) { order.append(2) }
            producerDone.open()
        }
        #expect(eventually { window.held.load(ordering: .acquiring) == 1 })
        // Pushes 3 and 4 link behind the unlinked 2.
        queue.async(group: group) { order.append(3) }
        queue.async(group: group) { order.append(4) }
        // The drainer finishes item 0, takes the chain and must wait at 1 for 2's link: it
        // never skips to 3 and never loses the chain.
        blocker.open()
        #expect(eventually { window.waitedAfter.load(ordering: .acquiring) != 0 })
        #expect(order.values == [0])
        window.release.open()
        #expect(producerDone.pass())
        #expect(waited(group))
        #expect(order.values == [0, 1, 2, 3, 4])
    }

    /// A drainer waiting for a held producer's link sleeps between looks once spins and
    /// yields did not end the wait: it used to yield for as long as the producer was
    /// held, a whole core's time.
    @Test func aDrainerWaitingOnAHeldLinkDoesNotSpendACore() throws {
        let window = Window()
        InboxHook.hook.install { window.hook($0) }
        defer { InboxHook.hook.install(nil) }
        let queue = DispatchQueue(label: "test.inbox.held-link")
        let group = DispatchGroup()
        let blocker = Gate()
        let started = Gate()
        queue.async(group: group) { started.open(); blocker.pass() }
        #expect(started.pass())
        queue.async(group: group) {}
        let producerDone = Gate()
        onOwnThread {
            window.holdThread.store(ThreadControl.threadID, ordering: .releasing)
            queue.async(group: group) {}
            producerDone.open()
        }
        #expect(eventually { window.held.load(ordering: .acquiring) == 1 })
        defer { window.release.open() }
        blocker.open()
        #expect(eventually { window.waitedAfter.load(ordering: .acquiring) != 0 })
        let clock = try #require(window.waiterClock.withLock { $0 }, "the waiting drainer's CPU clock is unreadable")
        let before = try #require(ThreadControl.cpuNanoseconds(of: clock))
        let looksBefore = window.waiterLooks.load(ordering: .relaxed)
        let start = monotonicNanoseconds
        sleepMilliseconds(300)  // the window measured: the producer stays held throughout
        let spent = try #require(ThreadControl.cpuNanoseconds(of: clock)) - before
        let looks = window.waiterLooks.load(ordering: .relaxed) - looksBefore
        let elapsed = monotonicNanoseconds - start
        // CPU time alone could pass a waiter that yields on a loaded machine, where the
        // yields hand its core away; the looks count it either way (about one per
        // millisecond asleep, hundreds of thousands yielding).
        #expect(spent < elapsed / 4,
                "the drainer waiting on the held link used \(spent / 1_000_000) ms of CPU in \(elapsed / 1_000_000) ms")
        #expect(looks < 5_000, "the drainer looked at the held link \(looks) times in \(elapsed / 1_000_000) ms")
        window.release.open()
        #expect(producerDone.pass())
        #expect(waited(group))
    }

    @Test func theFirstProducerHeldBeforeItTakesTheChainStillWakesTheQueue() {
        let window = Window()
        InboxHook.hook.install { window.hook($0) }
        defer { InboxHook.hook.install(nil) }
        let queue = DispatchQueue(label: "test.inbox.first")
        let order = Recorder<Int>()
        let group = DispatchGroup()
        // The queue is idle: the held push finds the inbox empty, so it is the one that
        // must take the chain and wake the queue; pushes behind it only link.
        let producerDone = Gate()
        onOwnThread {
            window.holdThread.store(ThreadControl.threadID, ordering: .releasing)
            queue.async(group: group) { order.append(0) }
            producerDone.open()
        }
        #expect(eventually { window.held.load(ordering: .acquiring) == 1 })
        #expect(window.heldPrevious.load(ordering: .acquiring) == 0)
        for index in 1...3 { queue.async(group: group) { order.append(index) } }
        // A sync now must not overtake the pushes before it: it queues behind them.
        let syncDone = Gate()
        onOwnThread {
            queue.sync { order.append(4) }
            syncDone.open()
        }
        settle(DispatchQueue.global())
        #expect(order.values.isEmpty)
        #expect(!syncDone.isOpen)
        window.release.open()
        #expect(producerDone.pass())
        #expect(syncDone.pass())
        #expect(waited(group))
        #expect(order.values == [0, 1, 2, 3, 4])
    }

    @Test func syncAfterALockFreePushRunsAfterIt() {
        let queue = DispatchQueue(label: "test.inbox.sync-order")
        let order = Recorder<Int>()
        for round in 0..<2_000 {
            queue.async { order.append(round * 2) }
            queue.sync { order.append(round * 2 + 1) }
        }
        #expect(order.values == Array(0..<4_000))
    }

    @Test func manyProducersKeepEachProducersOrderAndRunEveryItemOnce() {
        let queue = DispatchQueue(label: "test.inbox.producers")
        let producers = 4
        let perProducer = 20_000
        let seen = SlotCounters(count: producers)
        let outOfOrder = AtomicCounter()
        let group = DispatchGroup()
        let next = Cursors(count: producers)
        let ready = AtomicCounter()
        let go = Gate()
        for producer in 0..<producers {
            group.enter()
            onOwnThread {
                _ = ready.increment()
                go.pass()
                for index in 0..<perProducer {
                    queue.async {
                        // Items run one at a time on a serial queue: `next` needs no lock.
                        if next.values[producer] != index { _ = outOfOrder.increment() }
                        next.values[producer] = index + 1
                        seen.increment(producer)
                    }
                }
                group.leave()
            }
        }
        #expect(eventually { ready.value == producers })
        go.open()
        #expect(waited(group))
        queue.sync {}
        #expect(outOfOrder.value == 0)
        #expect(seen.slots(notEqualTo: UInt32(perProducer)).isEmpty)
    }

    @Test func pushesWhileSuspendedWaitForResumeInOrder() {
        let queue = DispatchQueue(label: "test.inbox.suspended")
        let order = Recorder<Int>()
        let group = DispatchGroup()
        queue.suspend()
        let producersDone = DispatchGroup()
        for producer in 0..<2 {
            producersDone.enter()
            onOwnThread {
                for index in 0..<1_000 { queue.async(group: group) { order.append(producer * 10_000 + index) } }
                producersDone.leave()
            }
        }
        #expect(waited(producersDone))
        settle(DispatchQueue.global())
        #expect(order.values.isEmpty)
        queue.resume()
        #expect(waited(group))
        let values = order.values
        #expect(values.count == 2_000)
        #expect(values.filter { $0 < 10_000 } == Array(0..<1_000))
        #expect(values.filter { $0 >= 10_000 } == Array(10_000..<11_000))
    }
}
