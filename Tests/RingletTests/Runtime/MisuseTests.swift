// Misuse traps, each in a child process (a Swift Testing exit test): the child must
// die of SIGABRT, and its stderr must name the object (queue label, semaphore, group)
// and what went wrong.

import Testing
@testable import Ringlet

@Suite struct MisuseTests {
    @Test func overResumeNamesTheQueue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let queue = DispatchQueue(label: "test.misuse.over-resume")
            queue.suspend()
            queue.resume()
            queue.resume()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("'test.misuse.over-resume'"), "\(text)")
        #expect(text.contains("over-resume"), "\(text)")
    }

    /// The source's own queue carries its target's label: the message names the source.
    @Test func overResumeOfASourceNamesTheSource() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.misuse.src-q"))
            source.activate()
            source.resume()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("resume() on user-data source (queue 'test.misuse.src-q'), which is not suspended"),
                "\(text)")
        #expect(text.contains("over-resume"), "\(text)")
    }

    @Test func syncOntoTheCurrentSerialQueue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let queue = DispatchQueue(label: "test.misuse.reentrant")
            queue.sync { queue.sync {} }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("sync onto queue 'test.misuse.reentrant'"), "\(text)")
        #expect(text.contains("deadlock"), "\(text)")
    }

    @Test func syncOntoAQueueThatTargetsTheCurrentOne() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let parent = DispatchQueue(label: "test.misuse.parent")
            let child = DispatchQueue(label: "test.misuse.child", target: parent)
            let done = DispatchSemaphore(value: 0)
            parent.async {
                child.sync {}
                done.signal()
            }
            _ = done.wait(timeout: .now() + 10)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("'test.misuse.child'") && text.contains("'test.misuse.parent'"), "\(text)")
    }

    @Test func syncOntoAQueueHeldFurtherUpTheStack() async {
        // outer's item syncs onto inner, whose block syncs back onto outer: outer is
        // still held by this thread, so the last sync can never run (GCD traps:
        // "dispatch_sync called on queue already owned by current thread").
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let outer = DispatchQueue(label: "test.misuse.outer")
            let inner = DispatchQueue(label: "test.misuse.inner")
            let done = DispatchSemaphore(value: 0)
            outer.async {
                inner.sync { outer.sync {} }
                done.signal()
            }
            // A hang ends here, with a normal exit: the test then fails.
            _ = done.wait(timeout: .now() + 3)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("sync onto queue 'test.misuse.outer'"), "\(text)")
    }

    @Test func barrierSyncFromInsideTheSameConcurrentQueue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let queue = DispatchQueue(label: "test.misuse.barrier-reentrant", attributes: .concurrent)
            queue.sync { queue.sync(flags: .barrier) {} }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("sync onto queue 'test.misuse.barrier-reentrant'"), "\(text)")
    }

    @Test func semaphoreReleasedBelowItsStartingValue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            do {
                let semaphore = DispatchSemaphore(value: 2)
                _ = semaphore.wait(timeout: .now())
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("DispatchSemaphore(value: 2)"), "\(text)")
        #expect(text.contains("released while in use"), "\(text)")
    }

    @Test func semaphoreWithANegativeStartingValue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            _ = DispatchSemaphore(value: -1)
        }
        #expect(result?.standardErrorText.contains("DispatchSemaphore(value: -1)") == true)
    }

    @Test func groupLeaveWithoutEnter() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let group = DispatchGroup()
            group.enter()
            group.leave()
            group.leave()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("DispatchGroup.leave() called more often than enter()"), "\(text)")
    }

    @Test func groupReleasedWithUnbalancedEnter() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            do {
                let group = DispatchGroup()
                group.enter()
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("DispatchGroup") && text.contains("unbalanced enter()"), "\(text)")
    }

    /// The closures of `async(group:)` hold their group without references of their
    /// own, through one the group holds on itself while they count: the last of them
    /// to run drops it, and an `enter()` left unbalanced is reported then, too.
    @Test func groupReleasedByItsLastClosureWithUnbalancedEnter() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let queue = DispatchQueue(label: "test.misuse.group-closure")
            queue.suspend()
            do {
                let group = DispatchGroup()
                group.enter()
                queue.async(group: group) {}
            }
            queue.resume()
            queue.sync {}
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("DispatchGroup") && text.contains("1 unbalanced enter()"), "\(text)")
    }

    @Test func dispatchPreconditionOnQueueOutsideIt() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let queue = DispatchQueue(label: "test.misuse.precondition")
            dispatchPrecondition(condition: .onQueue(queue))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("dispatchPrecondition failed"), "\(text)")
        #expect(text.contains("expected to run on queue 'test.misuse.precondition'"), "\(text)")
    }

    @Test func dispatchPreconditionNotOnQueueInsideIt() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let queue = DispatchQueue(label: "test.misuse.not-on")
            queue.sync { dispatchPrecondition(condition: .notOnQueue(queue)) }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("expected not to run on queue 'test.misuse.not-on'"), "\(text)")
        #expect(text.contains("running on 'test.misuse.not-on'"), "\(text)")
    }

    @Test func dispatchPreconditionAsBarrierOnAConcurrentItem() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let queue = DispatchQueue(label: "test.misuse.barrier", attributes: .concurrent)
            queue.sync { dispatchPrecondition(condition: .onQueueAsBarrier(queue)) }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("'test.misuse.barrier' as a barrier"), "\(text)")
    }

    @Test func releasingASuspendedQueue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            do {
                let queue = DispatchQueue(label: "test.misuse.suspended")
                queue.suspend()
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("'test.misuse.suspended'") && text.contains("released while suspended"), "\(text)")
    }

    @Test func releasingAnInactiveQueueWithPendingWork() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            do {
                let queue = DispatchQueue(label: "test.misuse.inactive", attributes: .initiallyInactive)
                queue.async {}
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("'test.misuse.inactive'") && text.contains("inactive"), "\(text)")
    }

    @Test func targetCycle() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let a = DispatchQueue(label: "test.misuse.cycle-a")
            let b = DispatchQueue(label: "test.misuse.cycle-b", target: a)
            a.setTarget(queue: b)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("cycle") && text.contains("'test.misuse.cycle-a'"), "\(text)")
    }

    @Test func retargetingAGlobalQueue() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            DispatchQueue.global(qos: .utility).setTarget(queue: DispatchQueue(label: "test.misuse.new-target"))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("com.apple.root.utility-qos") && text.contains("cannot change"), "\(text)")
    }

    @Test func dispatchMainOffTheMainThread() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            if ThreadContext.current.isMainThread {
                // Not the situation under test; fail loudly rather than hang in dispatchMain.
                Issue.record("the exit test body ran on the main thread")
                return
            }
            dispatchMain()
        }
        #expect(result?.standardErrorText.contains("not the main thread") == true)
    }
}
