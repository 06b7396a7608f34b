import Glibc
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletService

/// Importance boosting (the Services article): each test clamps a process of its own
/// (an exit test's child), since the clamp is the whole process's.
@Suite struct ServiceBoostTests {
    /// Whether the calling thread runs demoted: SCHED_IDLE or a nice value above 0 (the
    /// background and utility bands), as opposed to the threads that kept nice 0.
    static var threadIsDemoted: Bool {
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(Runtime.currentThreadID))
        return currentPolicy == SenderCheck.schedIdle || nice > 0
    }

    struct Seen: Sendable {
        let what: String
        let qos: DispatchQoS
        let demoted: Bool
        let boostReferences: Int
    }

    static func seen(_ what: String) -> Seen {
        Seen(what: what, qos: Runtime.currentQoS, demoted: threadIsDemoted,
             boostReferences: Runtime.current.statistics.boostReferences)
    }

    /// A clamped service's ordinary work runs demoted; a request from an urgent sender
    /// runs at its QoS on a thread that was never demoted, and so does what its handler
    /// submits (items) — the boost lasts past the reply while that work runs,
    /// then ends. Detached work does not keep it.
    @Test func anUrgentRequestIsBoostedUntilItsWorkIsDone() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            ServiceImportance.clampProcess(to: .background)
            #expect(ServiceImportance.processClamp == .background)
            let gate = DispatchSemaphore(value: 0)
            let seen = Delivered<Seen>()
            let work = DispatchQueue(label: "test.service.work")
            let other = DispatchQueue(label: "test.service.other")
            let service = try EchoService { _ in
                seen.put(ServiceBoostTests.seen("handler"))
                work.async {
                    gate.wait()
                    seen.put(ServiceBoostTests.seen("submitted"))
                }
                other.async(flags: .detached) { seen.put(ServiceBoostTests.seen("detached")) }
                return bytes("done")
            }
            let session = try ServiceSession(endpoint: service.endpoint)
            let replies = Delivered<Bool>()
            // From outside any item: the claim is default, which this nice-0 thread may make.
            session.send(bytes("urgent")) { replies.put((try? $0.get()) != nil) }
            let handler = try #require(seen.next())
            #expect(handler.what == "handler")
            #expect(handler.qos == .default)
            #expect(!handler.demoted, "the boosted handler runs on a thread that kept its priority")
            #expect(handler.boostReferences >= 1)
            let detached = try #require(seen.next())
            #expect(detached.what == "detached")
            // Clamped: a background item (which a reserve worker covering the blocked
            // item below may run, at nice 0, so the thread is not checked here).
            #expect(detached.qos == .background)
            #expect(replies.next() == true)
            // The reply is sent; the submitted item is still running (blocked on the gate).
            #expect(Runtime.current.statistics.boostReferences >= 1)
            gate.signal()
            let submitted = try #require(seen.next())
            #expect(submitted.what == "submitted")
            #expect(submitted.qos == .default)
            #expect(!submitted.demoted)
            #expect(eventually { Runtime.current.statistics.boostReferences == 0 })
            // Ordinary work, after the boost: clamped.
            work.async { seen.put(ServiceBoostTests.seen("ordinary")) }
            let ordinary = try #require(seen.next())
            #expect(ordinary.qos == .background)
            #expect(ordinary.demoted)
            let statistics = Runtime.current.statistics
            #expect(statistics.boostsBegun == 1)
            #expect(statistics.itemsClamped >= 2)
            #expect(statistics.importanceClamp == .background)
            session.cancel()
            service.listener.cancel()
            settleSockets()
        }
        reportChildErrors(result)
    }

    /// A sender at background priority boosts nothing: its request runs clamped.
    @Test func aBackgroundSenderBoostsNothing() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            ServiceImportance.clampProcess(to: .background)
            let seen = Delivered<Seen>()
            let service = try EchoService { _ in
                seen.put(ServiceBoostTests.seen("handler"))
                return bytes("done")
            }
            let session = try ServiceSession(endpoint: service.endpoint)
            #expect(setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(Runtime.currentThreadID), 19) == 0)
            let replies = Delivered<Bool>()
            session.send(bytes("not urgent")) { replies.put((try? $0.get()) != nil) }
            let handler = try #require(seen.next())
            #expect(handler.qos == .background)
            #expect(handler.demoted)
            #expect(replies.next() == true)
            #expect(Runtime.current.statistics.boostsBegun == 0)
            session.cancel()
            service.listener.cancel()
            settleSockets()
        }
        reportChildErrors(result)
    }
}
