// DispatchGroup: enter/leave counting, wait with and without timeouts, notify.

import Testing
@testable import Ringlet

@Suite struct GroupTests {
    @Test func emptyGroupWaitsReturnAtOnce() {
        let group = DispatchGroup()
        #expect(group.wait(timeout: .now()) == .success)
        #expect(group.wait(wallTimeout: .now()) == .success)
        #expect(group.wait(timeout: deadline()) == .success)
    }

    @Test func waitReturnsWhenEveryEnterIsLeft() {
        let group = DispatchGroup()
        let finished = AtomicCounter()
        for _ in 0..<8 {
            group.enter()
            DispatchQueue.global().async {
                sleepMilliseconds(5)
                finished.increment()
                group.leave()
            }
        }
        #expect(waited(group))
        #expect(finished.value == 8)
    }

    @Test func waitTimesOutWhileWorkIsOutstanding() {
        let group = DispatchGroup()
        group.enter()
        let start = monotonicNanoseconds
        #expect(group.wait(timeout: .now() + 0.05) == .timedOut)
        #expect(secondsSince(start) >= 0.049)
        #expect(group.wait(wallTimeout: .now() + 0.02) == .timedOut)
        #expect(group.wait(timeout: .now()) == .timedOut)
        group.leave()
        #expect(group.wait(timeout: .now()) == .success)
    }

    /// A leave that brought the count to zero and was preempted before its wake-up
    /// must not end a wait that began after the group was entered again: the wait is
    /// for the work entered before it (a board's barrier check saw `wait` return with 49
    /// of its 101 items run). The hook holds the leave in that window; no timing.
    @Test func aLateWakeUpFromAnEarlierReturnToZeroDoesNotEndALaterWait() {
        let group = DispatchGroup()
        let id = UInt(bitPattern: ObjectIdentifier(group).hashValue)
        let leaverHeld = Gate(), releaseLeaver = Gate(), waiterLooked = Gate(), waiterDone = Gate()
        let emptyings = AtomicCounter(), sleeps = AtomicCounter()
        let mainLeft = AtomicCounter(), returnedEarly = AtomicCounter()
        DispatchGroup.hook.install { point in
            switch point {
            case .emptiedBeforeWake(let group) where group == id:
                // Only the first return to zero is held.
                if emptyings.increment() == 1 {
                    leaverHeld.open()
                    releaseLeaver.pass()
                }
            case .waiterWillSleep(let group) where group == id:
                // The first sleep lets the late wake-up go; the second proves the
                // waiter looked again after it and kept waiting.
                if sleeps.increment() == 1 { releaseLeaver.open() } else { waiterLooked.open() }
            default:
                break
            }
        }
        defer { DispatchGroup.hook.install(nil) }
        group.enter()
        onOwnThread { group.leave() }
        #expect(leaverHeld.pass())
        group.enter()
        onOwnThread {
            _ = group.wait(timeout: deadline())
            if mainLeft.value == 0 { returnedEarly.increment() }
            waiterLooked.open()
            waiterDone.open()
        }
        #expect(waiterLooked.pass())
        mainLeft.increment()
        group.leave()
        #expect(waiterDone.pass())
        #expect(returnedEarly.value == 0, "the wait ended on the wake-up of a return to zero from before it began")
        #expect(group.wait(timeout: .now()) == .success)
    }

    /// Counts the layout (`GroupState`) keeps apart: entries and closures of any number
    /// up to the limits, a leave too many reading below zero, and the generation moving
    /// only when the count returns to zero.
    @Test func theStateWordCountsEntriesClosuresAndReturnsToZero() {
        var state: Int64 = 0
        for _ in 0..<3 { state = GroupState.entered(state, closures: 1) }
        state = GroupState.entered(state, closures: 0)
        #expect(GroupState.count(of: state) == 4)
        #expect(GroupState.closures(of: state) == 3)
        #expect(GroupState.generation(of: state) == 0)
        state &+= GroupState.leaveDelta(closures: 2)
        #expect(GroupState.count(of: state) == 2 && GroupState.closures(of: state) == 1)
        state &+= GroupState.leaveDelta(closures: 0)
        #expect(GroupState.generation(of: state) == 0)
        state &+= GroupState.leaveDelta(closures: 1)
        #expect(GroupState.count(of: state) == 0 && GroupState.closures(of: state) == 0)
        #expect(GroupState.generation(of: state) == 1)
        // Entering again from zero keeps the generation (an add would borrow from it).
        state = GroupState.entered(state, closures: 0)
        #expect(GroupState.generation(of: state) == 1 && GroupState.count(of: state) == 1)
        state &+= GroupState.leaveDelta(closures: 0)
        #expect(GroupState.generation(of: state) == 2)
        // A leave too many reads as a count below zero, the generation kept.
        state &+= GroupState.leaveDelta(closures: 0)
        #expect(GroupState.count(of: state) == -1 && GroupState.generation(of: state) == 2)
        // The largest count survives the trip through the field.
        var full: Int64 = 0
        let top = GroupState.maximumCount
        full = (((1 << GroupState.countBits) - top) & GroupState.countFieldMask) << GroupState.closureBits
        #expect(GroupState.count(of: full) == top)
        // 256 returns to zero wrap the generation without touching the count.
        var wrapping: Int64 = 0
        for _ in 0..<256 {
            wrapping = GroupState.entered(wrapping, closures: 1)
            wrapping &+= GroupState.leaveDelta(closures: 1)
        }
        #expect(wrapping == 0)
    }

    @Test func nestedEntersNeedEveryLeave() {
        let group = DispatchGroup()
        group.enter()
        group.enter()
        group.leave()
        #expect(group.wait(timeout: .now() + 0.02) == .timedOut)
        group.leave()
        #expect(group.wait(timeout: .now()) == .success)
    }

    @Test func asyncWithGroupCountsItemsOnSeveralQueues() {
        let group = DispatchGroup()
        let serial = DispatchQueue(label: "test.group.serial")
        let concurrent = DispatchQueue(label: "test.group.concurrent", attributes: .concurrent)
        let ran = AtomicCounter()
        for _ in 0..<100 {
            serial.async(group: group) { ran.increment() }
            concurrent.async(group: group) { ran.increment() }
            DispatchQueue.global(qos: .utility).async(group: group) { ran.increment() }
        }
        #expect(waited(group))
        #expect(ran.value == 300)
    }

    /// `async(group:)` has two overloads, `DispatchGroup` (what a caller holding a
    /// group reaches) and `DispatchGroup?`; both count the closure in the group, take
    /// the QoS and the flags, and nil counts nothing.
    @Test func aGroupGivenAsAnOptionalCountsLikeOne() {
        let optionalGroup = DispatchGroup()
        let group = DispatchGroup()
        let optional: DispatchGroup? = optionalGroup
        let none: DispatchGroup? = nil
        let queue = DispatchQueue(label: "test.group.optional", attributes: .concurrent)
        let gate = DispatchSemaphore(value: 0)
        let ran = AtomicCounter()
        queue.async(group: optional, qos: .utility) { gate.wait(); ran.increment() }
        queue.async(group: none) { ran.increment() }
        #expect(optionalGroup.wait(timeout: .now()) == .timedOut, "the optional group's closure was not counted")
        queue.async(group: group, qos: .utility, flags: .barrier) {
            #expect(ran.value == 2, "the barrier ran before the items ahead of it")
            ran.increment()
        }
        #expect(group.wait(timeout: .now()) == .timedOut, "the group's closure was not counted")
        gate.signal()
        #expect(waited(optionalGroup))
        #expect(waited(group))
        #expect(ran.value == 3)
    }

    @Test func notifyRunsAfterTheLastLeave() {
        let group = DispatchGroup()
        let queue = DispatchQueue(label: "test.group.notify")
        let events = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        for index in 0..<4 {
            group.enter()
            DispatchQueue.global().async {
                sleepMilliseconds(5 * (index + 1))
                events.append("work")
                group.leave()
            }
        }
        group.notify(queue: queue) {
            dispatchPrecondition(condition: .onQueue(queue))
            events.append("notify")
            done.signal()
        }
        #expect(waited(done))
        #expect(events.values == ["work", "work", "work", "work", "notify"])
    }

    /// A serial drain leaves a group once for a run of its items (holdGroupLeave in
    /// DispatchQueue+Drain.swift): the count still drops to zero exactly when the
    /// last of them has run — an item after the run that waits on the group does not
    /// deadlock, a notification runs once, after all of them, and a run of one
    /// group directly followed by another's leaves each at its end.
    @Test func aSerialQueueLeavesAGroupOnceForARunOfItsItems() {
        let queue = DispatchQueue(label: "test.group.run")
        queue.suspend()
        let first = DispatchGroup()
        let second = DispatchGroup()
        let ran = AtomicCounter()
        let notified = Recorder<Int>()
        let seenAfterFirst = Recorder<DispatchTimeoutResult>()
        for _ in 0..<50 { queue.async(group: first) { ran.increment() } }
        for _ in 0..<50 { queue.async(group: second) { ran.increment() } }
        queue.async { seenAfterFirst.append(first.wait(timeout: .now())) }
        first.notify(queue: DispatchQueue.global()) { notified.append(ran.value) }
        #expect(first.wait(timeout: .now()) == .timedOut)
        queue.resume()
        #expect(waited(first))
        #expect(waited(second))
        #expect(eventually { notified.values.count == 1 })
        #expect(notified.values.first.map { $0 >= 50 } == true)
        queue.sync {}
        #expect(seenAfterFirst.values == [.success])
        #expect(ran.value == 100)
        // Balanced: both groups can be released (an unbalanced one traps in deinit).
        #expect(first.wait(timeout: .now()) == .success && second.wait(timeout: .now()) == .success)
    }

    /// The closures of `async(group:)` hold their group through the one reference the
    /// group keeps on itself while they count (the caller lets go of it before they
    /// run): it lives until the last has run, leaves, and is then freed — not kept (a
    /// leak) and not freed early or twice (a crash here, or under AddressSanitizer). A
    /// suspended queue lines the items up in one run, left with one atomic operation.
    @Test func aRunOfGroupItemsGivesBackEveryReferenceToItsGroup() {
        let queue = DispatchQueue(label: "test.group.references")
        weak var weakGroup: DispatchGroup?
        let done = DispatchSemaphore(value: 0)
        do {
            let group = DispatchGroup()
            weakGroup = group
            queue.suspend()
            for _ in 0..<1_000 { queue.async(group: group) {} }
            group.notify(queue: queue) { done.signal() }
            queue.resume()
        }
        #expect(waited(done))
        queue.sync {}
        #expect(eventually { weakGroup == nil }, "the group outlived its items: a reference was kept")
    }

    /// Many producers on several queues at once: the closures' count goes to zero and
    /// back again and again while others submit, so the group's reference on itself is
    /// taken and dropped many times, from several threads. Every closure runs and
    /// leaves once, and the group is freed after the last (a reference taken too late
    /// or dropped twice crashes here or under the sanitizers; one never dropped keeps
    /// it).
    @Test func closuresOfManyProducersHoldTheGroupUntilTheLastHasRun() {
        let queues = (0..<4).map { DispatchQueue(label: "test.group.producers.\($0)") }
        let ran = AtomicCounter()
        weak var weakGroup: DispatchGroup?
        do {
            let group = DispatchGroup()
            weakGroup = group
            DispatchQueue.concurrentPerform(iterations: 8) { producer in
                for item in 0..<2_000 {
                    queues[(producer + item) % queues.count].async(group: group) { ran.increment() }
                }
            }
            #expect(waited(group))
        }
        #expect(ran.value == 16_000)
        for queue in queues { queue.sync {} }
        #expect(eventually { weakGroup == nil }, "the group outlived its closures: its reference on itself was kept")
    }

    @Test func notifyOnAnEmptyGroupRunsAtOnce() {
        let group = DispatchGroup()
        let done = DispatchSemaphore(value: 0)
        group.notify(queue: DispatchQueue.global()) { done.signal() }
        #expect(waited(done))
    }

    @Test func everyNotificationRunsOnce() {
        let group = DispatchGroup()
        let count = AtomicCounter()
        group.enter()
        for _ in 0..<5 {
            group.notify(queue: DispatchQueue.global()) { count.increment() }
        }
        group.notify(queue: DispatchQueue.global(), work: DispatchWorkItem { count.increment() })
        #expect(!eventually(within: 0.05) { count.value > 0 }, "a notification ran before the group emptied")
        group.leave()
        #expect(eventually { count.value == 6 }, "\(count.value) of 6 notifications ran")
        // Nothing fires twice, even when the group empties again.
        group.enter()
        group.leave()
        #expect(!eventually(within: 0.05) { count.value > 6 })
        #expect(count.value == 6)
    }

    @Test func aGroupCanBeReused() {
        let group = DispatchGroup()
        let queue = DispatchQueue(label: "test.group.reuse")
        for round in 1...3 {
            let ran = AtomicCounter()
            let notified = DispatchSemaphore(value: 0)
            for _ in 0..<round * 10 { queue.async(group: group) { ran.increment() } }
            group.notify(queue: queue) { notified.signal() }
            #expect(waited(group))
            #expect(waited(notified))
            #expect(ran.value == round * 10)
        }
    }

    /// Both high-band workers wait on one group that a later item empties: each wait
    /// is a Ringlet wait, so the item that leaves still gets a thread (a reserve). In a
    /// child with its own pool: in the test process, the waits held the shared pool's
    /// whole high band while other suites' work needed it.
    @Test func waitFromPoolThreads() async {
        await #expect(processExitsWith: .success) {
            startRuntime(twoCoreConfiguration())
            let group = DispatchGroup()
            group.enter()
            let waiters = DispatchGroup()
            let results = Recorder<DispatchTimeoutResult>()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: waiters) { results.append(group.wait(timeout: deadline())) }
            }
            #expect(eventually { blockedThreadCount == 2 }, "the two waits never blocked: \(Runtime.statistics)")
            DispatchQueue.global().async { group.leave() }
            #expect(waited(waiters))
            #expect(results.values == [.success, .success])
        }
    }

    @Test func notifyWithQoS() {
        let group = DispatchGroup()
        let queue = DispatchQueue(label: "test.group.notify-qos")
        let levels = Recorder<QoSLevel>()
        let done = DispatchSemaphore(value: 0)
        group.enter()
        group.notify(qos: .utility, queue: queue) {
            levels.append(currentLevel)
            done.signal()
        }
        group.leave()
        #expect(waited(done))
        #expect(levels.values == [.utility])
    }
}
