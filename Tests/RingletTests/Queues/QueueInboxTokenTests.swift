// While a serial queue's token waits in a global queue for a worker, producers leave
// their nodes in the queue's inbox for the drain the token starts, without taking the
// queue's lock (QueueInbox, "coming consumer"); a node more urgent than the waiting
// token still raises it at once. Each test keeps the only high-band worker busy on the
// CPU (not blocked, so no reserve covers it) in a child process with its own small pool.

import Synchronization
import Testing
@testable import Ringlet

enum TokenWaitScenario {
    /// cores 1 × 2 workers (1 high band, 1 utility band) + 1 reserve; the high-band
    /// worker spins until `release` is set. Returns the queue with one item pushed,
    /// whose token now waits for that worker.
    static func start(release: Gate, order: Recorder<Int>) -> DispatchQueue? {
        startRuntime(RuntimeConfiguration(cores: 1, workersPerCore: 2, reservePerCore: 1))
        let spinning = Gate()
        DispatchQueue.global().async {
            spinning.open()
            while !release.isOpen {}
        }
        guard spinning.pass() else { return nil }
        let queue = DispatchQueue(label: "test.inbox.token")
        queue.async { order.append(1) }
        return queue
    }

    /// (nodes in the FIFO, whether the inbox holds any, the token's QoS class)
    static func look(at queue: DispatchQueue) -> (fifo: Int, inboxHolds: Bool, token: QoSLevel) {
        queue.lock.withLock { (queue.state.fifo.count, !queue.inbox.isEmpty, queue.state.tokenPriority.level) }
    }
}

/// Three producers around the moment a token is marked out (the inbox's debug hook
/// holds each in its window): F1 took the chain in and is about to mark the token;
/// F2 started a new chain and has not stored its head; U joined behind F2 while no
/// mark was there, so it left its raise to F2 — who will read the mark and leave the
/// chain to the drain as well.
enum LateArrivalScenario {
    final class Steps: @unchecked Sendable {
        let markingThread = Atomic<Int32>(0)
        let secondThread = Atomic<Int32>(0)
        let firstMarking = Gate(), letFirstMark = Gate()
        let secondHeld = Gate(), letSecondGo = Gate()

        func hook(_ point: InboxHook.Point) {
            switch point {
            case .markingTokenOut:
                guard markingThread.load(ordering: .acquiring) == ThreadControl.threadID else { return }
                markingThread.store(0, ordering: .releasing)
                firstMarking.open()
                letFirstMark.pass()
            case .exchanged(_, let previous):
                guard previous == 0, secondThread.load(ordering: .acquiring) == ThreadControl.threadID else { return }
                secondThread.store(0, ordering: .releasing)
                secondHeld.open()
                letSecondGo.pass()
            case .waitingForLink:
                break
            }
        }
    }

    static func run() {
        let release = Gate()
        guard let queue = TokenWaitScenario.start(release: release, order: Recorder<Int>()) else { return }
        defer { release.open() }
        _ = queue  // its token waits for the busy worker, as the one below will
        let steps = Steps()
        InboxHook.hook.install { steps.hook($0) }
        defer { InboxHook.hook.install(nil) }
        let other = DispatchQueue(label: "test.inbox.late")
        onOwnThread {
            steps.markingThread.store(ThreadControl.threadID, ordering: .releasing)
            other.async {}  // F1
        }
        guard steps.firstMarking.pass() else { return }
        onOwnThread {
            steps.secondThread.store(ThreadControl.threadID, ordering: .releasing)
            other.async {}  // F2
        }
        guard steps.secondHeld.pass() else { return }
        other.async(qos: .userInitiated) {}  // U: joins behind F2 and sees no mark
        steps.letFirstMark.open()
        guard eventually({ other.inbox.coming.any }) else { return }
        steps.letSecondGo.open()
        let raised = eventually { other.lock.withLock { other.state.tokenPriority.level == .userInitiated } }
        #expect(raised, "the waiting token was not raised for the push that joined before its mark")
    }
}

@Suite struct QueueInboxTokenTests {
    @Test func pushesWhileTheTokenWaitsAreLeftInTheInboxForItsDrain() async {
        await #expect(processExitsWith: .success) {
            let release = Gate()
            let order = Recorder<Int>()
            guard let queue = TokenWaitScenario.start(release: release, order: order) else { return }
            for item in 2...5 { queue.async { order.append(item) } }
            let seen = TokenWaitScenario.look(at: queue)
            #expect(seen.fifo == 1, "the pushes behind the waiting token took the queue's lock")
            #expect(seen.inboxHolds, "nothing was left in the inbox for the token's drain")
            release.open()
            queue.sync {}
            #expect(order.values == [1, 2, 3, 4, 5])
        }
    }

    @Test func aMoreUrgentPushRaisesTheWaitingTokenAtOnce() async {
        await #expect(processExitsWith: .success) {
            let release = Gate()
            let order = Recorder<Int>()
            guard let queue = TokenWaitScenario.start(release: release, order: order) else { return }
            queue.async { order.append(2) }
            #expect(TokenWaitScenario.look(at: queue).token == .default)
            queue.async(qos: .userInitiated) { order.append(3) }
            let seen = TokenWaitScenario.look(at: queue)
            #expect(seen.token == .userInitiated, "the waiting token was not raised: \(seen.token.name)")
            #expect(seen.fifo == 3 && !seen.inboxHolds, "the raising push did not take the inbox in")
            release.open()
            queue.sync {}
            #expect(order.values == [1, 2, 3])
        }
    }

    /// A raise wants a second token while the pool is full (here the hook refuses the
    /// node), and the first token drains the queue before the refusal is known: that
    /// drain's end saw the raise's token counted and marked it coming. The refusal must
    /// take the mark back, or producers leave their items for a drain that never
    /// starts and the queue stalls for ever.
    @Test func aRaiseRefusedForAFullPoolLeavesNoTokenMarkedComing() async {
        await #expect(processExitsWith: .success) {
            let release = Gate()
            let order = Recorder<Int>()
            guard let queue = TokenWaitScenario.start(release: release, order: order) else { return }
            PooledTokenHook.hook.install { asking in
                guard asking.label == "test.inbox.token" else { return true }
                // Let the first token drain everything, then refuse.
                release.open()
                _ = eventually {
                    order.values.count == 2 && asking.lock.withLock { asking.state.running == 0 }
                }
                return false
            }
            queue.async(qos: .userInitiated) { order.append(2) }
            PooledTokenHook.hook.install(nil)
            let ran = DispatchSemaphore(value: 0)
            queue.async {
                order.append(3)
                ran.signal()
            }
            #expect(waited(ran), "the queue stalled: a refused token stayed marked as coming")
            #expect(order.values == [1, 2, 3])
        }
    }

    /// A push that joined a chain before the token was marked out is still raised
    /// for: the lock holder that marks looks for such nodes after its mark
    /// (QueueInbox.tokenIsOut).
    @Test func aPushThatJoinedBeforeTheTokenMarkStillRaisesTheToken() async {
        await #expect(processExitsWith: .success) { LateArrivalScenario.run() }
    }
}
