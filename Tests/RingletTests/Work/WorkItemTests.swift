// DispatchWorkItem: perform, wait (with and without timeouts), notify, cancel, and
// the QoS captured with .assignCurrentContext.

import Testing
@testable import Ringlet

@Suite struct WorkItemTests {
    @Test func performRunsOnTheCallingThreadAndCompletes() {
        let caller = ThreadControl.threadID
        let threads = Recorder<Int32>()
        let item = DispatchWorkItem { threads.append(ThreadControl.threadID) }
        #expect(item.wait(timeout: .now()) == .timedOut)
        item.perform()
        #expect(threads.values == [caller])
        #expect(item.wait(timeout: .now()) == .success)
        #expect(item.wait(timeout: deadline()) == .success)
        #expect(!item.isCancelled)
    }

    @Test func waitReturnsOnceTheQueueRanIt() {
        let queue = DispatchQueue(label: "test.item.wait")
        let ran = AtomicCounter()
        let item = DispatchWorkItem {
            sleepMilliseconds(20)
            ran.increment()
        }
        queue.async(execute: item)
        #expect(item.wait(timeout: deadline()) == .success)
        #expect(ran.value == 1)
    }

    @Test func waitTimesOutThenSucceeds() {
        let queue = DispatchQueue(label: "test.item.timeout")
        let release = DispatchSemaphore(value: 0)
        let item = DispatchWorkItem { _ = release.wait(timeout: deadline()) }
        queue.async(execute: item)
        let start = monotonicNanoseconds
        #expect(item.wait(timeout: .now() + 0.05) == .timedOut)
        #expect(secondsSince(start) >= 0.049)
        #expect(item.wait(wallTimeout: .now() + 0.02) == .timedOut)
        release.signal()
        #expect(item.wait(timeout: deadline()) == .success)
        #expect(item.wait(wallTimeout: .now()) == .success)
    }

    @Test func notifyRunsAfterTheItemOnTheGivenQueue() {
        let queue = DispatchQueue(label: "test.item.queue")
        let notifyQueue = DispatchQueue(label: "test.item.notify-queue")
        let events = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let item = DispatchWorkItem {
            sleepMilliseconds(10)
            events.append("item")
        }
        item.notify(queue: notifyQueue) {
            dispatchPrecondition(condition: .onQueue(notifyQueue))
            events.append("notify1")
        }
        item.notify(queue: notifyQueue, execute: DispatchWorkItem {
            events.append("notify2")
            done.signal()
        })
        queue.async(execute: item)
        #expect(waited(done))
        #expect(events.values == ["item", "notify1", "notify2"])
    }

    @Test func notifyAfterCompletionRunsAtOnce() {
        let item = DispatchWorkItem {}
        item.perform()
        let done = DispatchSemaphore(value: 0)
        item.notify(queue: DispatchQueue.global()) { done.signal() }
        #expect(waited(done))
    }

    @Test func cancelBeforeRunSkipsTheBlockButReleasesWaiters() {
        let queue = DispatchQueue(label: "test.item.cancel")
        queue.suspend()
        let ran = AtomicCounter()
        let notified = DispatchSemaphore(value: 0)
        let item = DispatchWorkItem { ran.increment() }
        item.notify(queue: DispatchQueue.global()) { notified.signal() }
        queue.async(execute: item)
        item.cancel()
        #expect(item.isCancelled)
        queue.resume()
        #expect(item.wait(timeout: deadline()) == .success)
        #expect(waited(notified))
        #expect(ran.value == 0)
        // perform() on a cancelled item does nothing either.
        item.perform()
        #expect(ran.value == 0)
    }

    /// A node keeps a work item's group in the field closures use (WorkNode.carrying):
    /// the group is left once per submission, cancelled or not, and a closure's group
    /// (kept where a work item would be) is left after the closure ran.
    @Test func cancelledItemsLeaveTheirGroupOncePerSubmission() {
        let queue = DispatchQueue(label: "test.item.cancel-group")
        queue.suspend()
        let ran = AtomicCounter()
        let group = DispatchGroup()
        let item = DispatchWorkItem { ran.increment() }
        queue.async(group: group, execute: item)
        queue.async(group: group, execute: item)
        queue.async(group: group) { ran.increment() }
        item.cancel()
        #expect(group.wait(timeout: .now()) == .timedOut)
        queue.resume()
        #expect(waited(group))
        queue.sync {}
        #expect(ran.value == 1)
        // A balanced group: one more enter and leave would trap on an extra leave.
        group.enter()
        group.leave()
        #expect(group.wait(timeout: .now()) == .success)
    }

    @Test func cancelWhileRunningLetsTheBlockFinish() {
        let queue = DispatchQueue(label: "test.item.cancel-running")
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = AtomicCounter()
        let item = DispatchWorkItem {
            running.signal()
            _ = release.wait(timeout: deadline())
            finished.increment()
        }
        queue.async(execute: item)
        #expect(waited(running))
        item.cancel()
        release.signal()
        #expect(item.wait(timeout: deadline()) == .success)
        #expect(finished.value == 1)
        #expect(item.isCancelled)
    }

    @Test func itemCanRunTwiceButCompletesOnce() {
        let queue = DispatchQueue(label: "test.item.twice")
        let ran = AtomicCounter()
        let notified = AtomicCounter()
        let item = DispatchWorkItem { ran.increment() }
        let group = DispatchGroup()
        item.notify(queue: queue) { notified.increment() }
        queue.async(group: group, execute: item)
        queue.async(group: group, execute: item)
        #expect(waited(group))
        queue.sync {}
        #expect(ran.value == 2)
        #expect(notified.value == 1)
    }

    @Test func asyncWithGroupAndSyncExecute() {
        let queue = DispatchQueue(label: "test.item.group", attributes: .concurrent)
        let group = DispatchGroup()
        let ran = AtomicCounter()
        for _ in 0..<10 { queue.async(group: group, execute: DispatchWorkItem { ran.increment() }) }
        #expect(waited(group))
        queue.sync(execute: DispatchWorkItem { ran.increment() })
        #expect(ran.value == 11)
    }

    @Test func waitingFromAPoolThread() {
        let queue = DispatchQueue(label: "test.item.wait-from-pool")
        let item = DispatchWorkItem { sleepMilliseconds(5) }
        let results = Recorder<DispatchTimeoutResult>()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            queue.async(execute: item)
            results.append(item.wait(timeout: deadline()))
            done.signal()
        }
        #expect(waited(done))
        #expect(results.values == [.success])
    }

    @Test func assignCurrentContextCapturesTheCreatorsQoS() {
        // Created while running at userInitiated, submitted from a utility thread:
        // with .assignCurrentContext the item keeps userInitiated, without it takes
        // the submitter's utility.
        let made = DispatchQueue.global(qos: .userInitiated).sync {
            (DispatchWorkItem(flags: .assignCurrentContext) { }, currentLevel)
        }
        #expect(made.1 == .userInitiated)
        let target = DispatchQueue(label: "test.item.assign")
        let levels = Recorder<(String, QoSLevel)>()
        let captured = DispatchQueue.global(qos: .userInitiated).sync {
            DispatchWorkItem(flags: .assignCurrentContext) { levels.append(("assigned", currentLevel)) }
        }
        let plain = DispatchQueue.global(qos: .userInitiated).sync {
            DispatchWorkItem { levels.append(("plain", currentLevel)) }
        }
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global(qos: .utility).async {
            target.async(group: group, execute: captured)
            target.async(group: group, execute: plain)
            group.leave()
        }
        #expect(waited(group))
        let values = levels.values
        #expect(values.count == 2)
        #expect(values.first { $0.0 == "assigned" }?.1 == .userInitiated)
        #expect(values.first { $0.0 == "plain" }?.1 == .utility)
    }

    @Test func itemQoSAppliesOnAQueueWithoutQoS() {
        let queue = DispatchQueue(label: "test.item.qos")
        let levels = Recorder<QoSLevel>()
        let item = DispatchWorkItem(qos: .utility) { levels.append(currentLevel) }
        queue.async(execute: item)
        #expect(item.wait(timeout: deadline()) == .success)
        #expect(levels.values == [.utility])
    }
}
