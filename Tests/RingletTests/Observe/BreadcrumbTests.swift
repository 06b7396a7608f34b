import Glibc
import Testing
@testable import Ringlet

/// Breadcrumbs: every item remembers the queue (or thread) that submitted it and
/// carries its activity across each kind of hop — async, asyncAfter, sync, work-item
/// notify, group notify, source handlers — and traps show the chain.
@Suite(.enabled(if: RingAvailability.works, "io_uring is refused here"))
struct BreadcrumbTests {
    /// What the running item carries: its crumb, and the chain as the dump prints it.
    struct Seen: Sendable {
        let crumb: Breadcrumb
        let chain: String
    }

    static func here() -> Seen {
        let crumb = Breadcrumb(raw: ThreadContext.current.runningCrumb.load(ordering: .relaxed))
        return Seen(crumb: crumb, chain: crumb.chainDescription() ?? "(none)")
    }

    /// Runs `hop` inside an item of queue `from` (itself submitted from this thread) and
    /// returns what the item `hop` causes to run saw, with the crumb of the item on `from`.
    func afterHop(from label: String, _ hop: @escaping @Sendable (DispatchQueue, @escaping @Sendable () -> Void) -> Void)
        -> (outer: Seen, inner: Seen)? {
        let from = DispatchQueue(label: label)
        let target = DispatchQueue(label: "test.crumb.target")
        let recorded = Recorder<(String, Seen)>()
        let done = DispatchSemaphore(value: 0)
        from.async {
            recorded.append(("outer", Self.here()))
            hop(target) {
                recorded.append(("inner", Self.here()))
                done.signal()
            }
        }
        guard waited(done) else { return nil }
        let values = recorded.values
        guard let outer = values.first(where: { $0.0 == "outer" })?.1,
              let inner = values.first(where: { $0.0 == "inner" })?.1 else { return nil }
        return (outer, inner)
    }

    /// The inner item came from `label`, one hop further on the outer item's activity.
    func expectContinued(_ seen: (outer: Seen, inner: Seen)?, from label: String,
                         sourceLocation: SourceLocation = #_sourceLocation) {
        guard let seen else {
            Issue.record("the hop did not run", sourceLocation: sourceLocation)
            return
        }
        #expect(seen.outer.chain.hasPrefix("enqueued from thread "), "\(seen.outer.chain)",
                sourceLocation: sourceLocation)
        #expect(seen.inner.crumb.activity == seen.outer.crumb.activity, "\(seen.outer.chain) / \(seen.inner.chain)",
                sourceLocation: sourceLocation)
        #expect(seen.inner.crumb.hops == seen.outer.crumb.hops + 1, sourceLocation: sourceLocation)
        #expect(seen.inner.chain.hasPrefix("enqueued from '\(label)' ← thread "), "\(seen.inner.chain)",
                sourceLocation: sourceLocation)
    }

    @Test func async() {
        expectContinued(afterHop(from: "test.crumb.async") { target, body in target.async { body() } },
                        from: "test.crumb.async")
    }

    @Test func asyncAfter() {
        expectContinued(afterHop(from: "test.crumb.after") { target, body in
            target.asyncAfter(deadline: .now() + .milliseconds(5)) { body() }
        }, from: "test.crumb.after")
    }

    @Test func asyncOfAWorkItem() {
        expectContinued(afterHop(from: "test.crumb.item") { target, body in
            target.async(execute: DispatchWorkItem { body() })
        }, from: "test.crumb.item")
    }

    /// Inside `sync` the item runs on the caller's thread; what it submits comes from
    /// the queue synced onto, still on the caller's activity.
    @Test func syncThenAsync() {
        let middle = DispatchQueue(label: "test.crumb.sync.middle")
        let seen = afterHop(from: "test.crumb.sync") { target, body in
            middle.sync { target.async { body() } }
        }
        guard let seen else { Issue.record("the hop did not run"); return }
        #expect(seen.inner.crumb.activity == seen.outer.crumb.activity)
        #expect(seen.inner.chain.hasPrefix("enqueued from 'test.crumb.sync.middle' ← … ← thread "), "\(seen.inner.chain)")
        #expect(seen.inner.chain.contains("(3 hops)"), "\(seen.inner.chain)")
    }

    /// A work item's notification continues the activity of whoever asked for it.
    @Test func workItemNotify() {
        let runner = DispatchQueue(label: "test.crumb.notify.runner")
        expectContinued(afterHop(from: "test.crumb.notify") { target, body in
            let item = DispatchWorkItem {}
            item.notify(queue: target) { body() }
            runner.async(execute: item)
        }, from: "test.crumb.notify")
    }

    /// A group's notification continues the notifier's activity, not the one of the
    /// thread that left the group last.
    @Test func groupNotify() {
        let group = DispatchGroup()
        group.enter()
        let seen = afterHop(from: "test.crumb.group") { target, body in
            // A plain work item: nothing captured at its creation.
            group.notify(queue: target, work: DispatchWorkItem { body() })
            // Left by an item of another activity (begun on another queue's thread).
            DispatchQueue(label: "test.crumb.group.leaver").asyncAfter(deadline: .now() + .milliseconds(5)) {
                group.leave()
            }
        }
        expectContinued(seen, from: "test.crumb.group")
    }

    /// A source's handlers continue the activity of the thread that activated it.
    @Test func sourceHandler() {
        let sources = Recorder<DispatchSourceUserDataAdd>()
        expectContinued(afterHop(from: "test.crumb.source") { target, body in
            let source = DispatchSource.makeUserDataAddSource(queue: target)
            source.setEventHandler { body() }
            source.activate()
            source.add(data: 1)
            sources.append(source)
        }, from: "test.crumb.source")
        for source in sources.values { source.cancel() }
    }

    /// What a thread outside any item submits begins at that thread.
    @Test func aThreadOutsideAnyItemIsTheOrigin() {
        let queue = DispatchQueue(label: "test.crumb.thread")
        let seen = queue.sync { Self.here() }
        #expect(seen.chain.hasPrefix("enqueued from thread "), "\(seen.chain)")
        #expect(seen.crumb.hops == 1)
        #expect(Breadcrumb.name(of: Breadcrumb.threadBit | UInt32(getpid())) == "thread main")
    }

    /// A released queue is still named by the chains of items it submitted.
    @Test func aReleasedQueueIsStillNamed() {
        var number: UInt32 = 0
        do {
            let gone = DispatchQueue(label: "test.crumb.released")
            number = gone.number
        }
        #expect(Breadcrumb.name(of: number) == "'test.crumb.released' (released since)")
    }

    /// A misuse trap names the item's queue and where the item came from.
    @Test func aTrapShowsTheChain() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            let outer = DispatchQueue(label: "test.crumb.trap.outer")
            let trapping = DispatchQueue(label: "test.crumb.trap")
            outer.async { trapping.async { trapping.resume() } }
            sleepMilliseconds(10_000)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("over-resume"), "\(text)")
        #expect(text.contains("(this thread runs an item of queue 'test.crumb.trap', enqueued from "
            + "'test.crumb.trap.outer' ← thread "), "\(text)")
    }
}
