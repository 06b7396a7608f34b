// What a work item, a source handler or a notification releases is released while
// the thread is still on the queue (as Dispatch does): a `deinit` that the release
// runs sees the queue as current — its specifics, `dispatchPrecondition(.onQueue)` —
// and may do what a library's "may be deallocated on its own queue" objects do.

import Testing
@testable import Ringlet

/// Calls `onDeinit` from its `deinit`: the probe whose last reference a closure holds.
final class ReleaseProbe: @unchecked Sendable {
    private let onDeinit: () -> Void
    init(_ onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

@Suite struct ReleaseOnQueueTests {
    /// The queue's specific as the probe's deinit sees it, once `submit` has handed the
    /// probe's last reference to work on `queue` (which is suspended meanwhile, so the
    /// submitter's own reference is surely gone before the work runs).
    private func specificSeenAtRelease(on queue: DispatchQueue, key: DispatchSpecificKey<String>,
                                       submit: (ReleaseProbe) -> Void) -> [String?] {
        let seen = Recorder<String?>()
        let released = DispatchSemaphore(value: 0)
        queue.suspend()
        do {
            let probe = ReleaseProbe {
                seen.append(DispatchQueue.getSpecific(key: key))
                released.signal()
            }
            submit(probe)
        }
        queue.resume()
        _ = waited(released)
        return seen.values
    }

    private func labelled(_ label: String, attributes: DispatchQueue.Attributes = [])
        -> (DispatchQueue, DispatchSpecificKey<String>) {
        let queue = DispatchQueue(label: label, attributes: attributes)
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: label)
        return (queue, key)
    }

    @Test func anAsyncClosureIsReleasedOnItsSerialQueue() {
        let (queue, key) = labelled("test.release.serial")
        let seen = specificSeenAtRelease(on: queue, key: key) { probe in
            queue.async { withExtendedLifetime(probe) {} }
        }
        #expect(seen == ["test.release.serial"])
    }

    @Test func anAsyncClosureIsReleasedOnItsConcurrentQueue() {
        let (queue, key) = labelled("test.release.concurrent", attributes: .concurrent)
        let seen = specificSeenAtRelease(on: queue, key: key) { probe in
            queue.async { withExtendedLifetime(probe) {} }
        }
        #expect(seen == ["test.release.concurrent"])
    }

    @Test func aGroupClosureIsReleasedOnItsQueue() {
        let (queue, key) = labelled("test.release.group")
        let group = DispatchGroup()
        let seen = specificSeenAtRelease(on: queue, key: key) { probe in
            queue.async(group: group) { withExtendedLifetime(probe) {} }
        }
        #expect(seen == ["test.release.group"])
        #expect(waited(group))
    }

    /// Held group leaves: several closures of one group in a row.
    @Test func closuresOfOneGroupInARowAreReleasedOnTheirQueue() {
        let (queue, key) = labelled("test.release.group-run")
        let group = DispatchGroup()
        let seen = Recorder<String?>()
        queue.suspend()
        for _ in 0..<3 {
            let probe = ReleaseProbe { seen.append(DispatchQueue.getSpecific(key: key)) }
            queue.async(group: group) { withExtendedLifetime(probe) {} }
        }
        queue.resume()
        #expect(waited(group))
        queue.sync {}
        #expect(seen.values == Array(repeating: "test.release.group-run", count: 3))
    }

    @Test func aWorkItemTheQueueHoldsLastIsReleasedOnItsQueue() {
        let (queue, key) = labelled("test.release.work-item")
        let seen = specificSeenAtRelease(on: queue, key: key) { probe in
            queue.async(execute: DispatchWorkItem { withExtendedLifetime(probe) {} })
        }
        #expect(seen == ["test.release.work-item"])
    }

    @Test func anAsyncAfterClosureIsReleasedOnItsQueue() {
        let (queue, key) = labelled("test.release.after")
        let seen = specificSeenAtRelease(on: queue, key: key) { probe in
            queue.asyncAfter(deadline: .now() + .milliseconds(1)) { withExtendedLifetime(probe) {} }
        }
        #expect(seen == ["test.release.after"])
    }

    @Test func aGroupNotificationIsReleasedOnItsQueue() {
        let (queue, key) = labelled("test.release.notify")
        let group = DispatchGroup()
        let seen = specificSeenAtRelease(on: queue, key: key) { probe in
            group.notify(queue: queue) { withExtendedLifetime(probe) {} }
        }
        #expect(seen == ["test.release.notify"])
    }

    /// The specific the probe's deinit sees once `install` has given the probe's last
    /// reference to a handler of a user-data source on `queue`, and `trigger` has made
    /// the source let that handler go.
    private func specificSeenAtHandlerRelease(on queue: DispatchQueue, key: DispatchSpecificKey<String>,
                                              install: (DispatchSourceUserDataAdd, ReleaseProbe) -> Void,
                                              trigger: (DispatchSourceUserDataAdd) -> Void) -> [String?] {
        let seen = Recorder<String?>()
        let released = DispatchSemaphore(value: 0)
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        do {
            let probe = ReleaseProbe {
                seen.append(DispatchQueue.getSpecific(key: key))
                released.signal()
            }
            install(source, probe)
        }
        source.activate()
        trigger(source)
        _ = waited(released)
        source.cancel()
        return seen.values
    }

    /// A handler that replaces itself: the old handler's last reference goes on the queue.
    @Test func aReplacedSourceHandlerIsReleasedOnItsQueue() {
        let (queue, key) = labelled("test.release.handler")
        let seen = specificSeenAtHandlerRelease(on: queue, key: key, install: { source, probe in
            source.setEventHandler { [unowned source] in
                withExtendedLifetime(probe) {}
                source.setEventHandler {}
            }
        }, trigger: { $0.add(data: 1) })
        #expect(seen == ["test.release.handler"])
    }

    @Test func aSourceCancelHandlerIsReleasedOnItsQueue() {
        let (queue, key) = labelled("test.release.cancel")
        let seen = specificSeenAtHandlerRelease(on: queue, key: key, install: { source, probe in
            source.setCancelHandler { withExtendedLifetime(probe) {} }
        }, trigger: { $0.cancel() })
        #expect(seen == ["test.release.cancel"])
    }

    /// The database library's pattern: an object "may be deallocated on its own queue";
    /// its deinit runs its cleanup directly when it finds itself on the queue, else
    /// with `sync`. Released by a closure of that queue, it must see the queue (a
    /// `sync` from the thread that holds the queue's slot would never return).
    @Test func aDeinitThatSyncsWhenOffItsQueueFinishes() async {
        await #expect(processExitsWith: .success) { ReleaseScenarios.deinitSyncsWhenOffItsQueue() }
    }
}

enum ReleaseScenarios {
    static func deinitSyncsWhenOffItsQueue() {
        startRuntime(twoCoreConfiguration())
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "test.release.database")
        queue.setSpecific(key: key, value: 1)
        let cleaned = DispatchSemaphore(value: 0)
        queue.suspend()
        do {
            let connection = ReleaseProbe {
                if DispatchQueue.getSpecific(key: key) == nil {
                    queue.sync { _ = cleaned.signal() }
                } else {
                    _ = cleaned.signal()
                }
            }
            queue.async { withExtendedLifetime(connection) {} }
        }
        queue.resume()
        #expect(waited(cleaned))
    }
}
