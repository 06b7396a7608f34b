// Self-waits: a thread waiting on something only it could provide is named as that —
// which thread, which queue or item, and what to do instead — at once, never after a
// deadlock report's grace, and never as "raise reservePerCore". Each in a child
// process that must die of SIGABRT with the message.

import Testing
@testable import Ringlet

@Suite struct SelfWaitTests {
    /// The database library's deinit without its `getSpecific` check: released on its
    /// own queue, it syncs onto that queue.
    @Test func aDeinitThatSyncsOntoTheQueueReleasingIt() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            let queue = DispatchQueue(label: "test.selfwait.deinit")
            queue.suspend()
            do {
                let connection = ReleaseProbe { queue.sync {} }
                queue.async { withExtendedLifetime(connection) {} }
            }
            queue.resume()
            sleepMilliseconds(10_000)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("self-wait: sync onto queue 'test.selfwait.deinit'"), "\(text)")
        #expect(text.contains("from thread 'ringlet-w"), "the thread is not named: \(text)")
        #expect(!text.contains("reservePerCore"), "\(text)")
    }

    /// A queue whose target the thread holds: named with the queue that is held.
    @Test func syncOntoAChildOfTheHeldQueueNamesBoth() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            let parent = DispatchQueue(label: "test.selfwait.parent")
            let child = DispatchQueue(label: "test.selfwait.child", target: parent)
            parent.sync { child.sync {} }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("sync onto queue 'test.selfwait.child' (it runs on 'test.selfwait.parent')"), "\(text)")
    }

    @Test func aWorkItemWaitingOnItself() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            let box = UncheckedBox(Recorder<DispatchWorkItem>())
            let item = DispatchWorkItem { box.value.values.first?.wait() }
            box.value.append(item)
            DispatchQueue(label: "test.selfwait.item").async(execute: item)
            sleepMilliseconds(10_000)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("self-wait: DispatchWorkItem.wait() from inside that item's own closure on "
            + "thread 'ringlet-w"), "\(text)")
        #expect(text.contains("notify(queue:execute:)"), "no way out named: \(text)")
    }

    /// The item waits behind the waiting thread's own item on a serial queue.
    @Test func aWorkItemQueuedBehindTheWaiter() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            let queue = DispatchQueue(label: "test.selfwait.behind")
            queue.sync {
                let item = DispatchWorkItem {}
                queue.async(execute: item)
                item.wait()
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("for an item queued on queue 'test.selfwait.behind'"), "\(text)")
        #expect(text.contains("which this thread holds"), "\(text)")
    }

    /// Not self-waits: a timed wait may run out, and an item queued on another queue
    /// runs while the waiter holds its own.
    @Test func waitsOthersCanEndAreLeftAlone() async {
        await #expect(processExitsWith: .success) {
            startRuntime(twoCoreConfiguration())
            let queue = DispatchQueue(label: "test.selfwait.fine")
            let other = DispatchQueue(label: "test.selfwait.other")
            queue.sync {
                let item = DispatchWorkItem {}
                queue.async(execute: item)
                #expect(item.wait(timeout: .now() + .milliseconds(20)) == .timedOut)
                let elsewhere = DispatchWorkItem {}
                other.async(execute: elsewhere)
                #expect(elsewhere.wait(timeout: deadline()) == .success)
                elsewhere.wait()
            }
        }
    }
}
