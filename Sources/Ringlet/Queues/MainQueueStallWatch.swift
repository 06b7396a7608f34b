import Synchronization

/// Says so when the main queue holds work that nothing drains: items, `@MainActor`
/// jobs or a `sync` onto it wait, and the main thread is neither in `dispatchMain()`
/// nor in another drain of the main queue (`MainThread.drain(until:)`). Without it,
/// such a program just hangs. One look, on the manager thread, the grace period
/// (`mainQueueGraceMilliseconds`) after a token was posted with no drain running;
/// nothing at all while the main thread drains, so an idle program makes no wake-up.
///
///   idle --(1) token posted, no drain--> armed --(2) look: drained since--> idle
///   armed --(2) look: still waiting, nothing drained--> reported --(3) a drain starts--> idle
///
///   (1) MainThread.tokenPosted   (2) look, manager thread   (3) MainThread.drain
// @unchecked Sendable: atomics; the rest is immutable.
final class MainQueueStallWatch: @unchecked Sendable {
    /// A look is scheduled, or the stall was reported (until a drain starts).
    private let armed = Atomic<Bool>(false)
    private let reported = Atomic<Int>(0)
    /// Reports made since start.
    var reports: Int { reported.load(ordering: .relaxed) }

    /// A token was posted while no drain runs: schedules a look unless one is.
    func tokenPostedWithoutDrain(drains: UInt64) {
        if armed.load(ordering: .sequentiallyConsistent) || armed.exchange(true, ordering: .sequentiallyConsistent) {
            return
        }
        schedule(drains: drains)
    }

    /// A drain of the main queue starts: a later post arms the watch again.
    func drainStarts() {
        if armed.load(ordering: .relaxed) { armed.store(false, ordering: .relaxed) }
    }

    private func schedule(drains: UInt64) {
        let parts = RuntimeParts.shared
        let grace = UInt64(parts.mainQueueGraceMilliseconds) * 1_000_000
        guard grace > 0 else { return }  // stays armed: never looks
        parts.manager.takeUnretainedValue().submit(.oneShot(
            deadline: MonotonicClock.nanoseconds &+ grace, leeway: grace / 10, wall: false,
            action: { [unowned(unsafe) self] in look(drainsThen: drains, grace: grace) }))
    }

    /// Manager thread: the grace period after the post.
    private func look(drainsThen: UInt64, grace: UInt64) {
        let thread = MainThread.shared
        let main = DispatchQueue.main
        let pending = main.lock.withLock { main.state.tokensOutstanding > 0 }
        if thread.isDraining || !pending {
            armed.store(false, ordering: .sequentiallyConsistent)
            // A post between the look and the store found the watch armed and left it:
            // look at the queue again now that a post would arm it.
            if !thread.isDraining && main.lock.withLock({ main.state.tokensOutstanding > 0 }) {
                tokenPostedWithoutDrain(drains: thread.drainCount)
            }
            return
        }
        let drains = thread.drainCount
        if drains != drainsThen {
            // Drained meanwhile, and work waits again: look again a grace period on.
            schedule(drains: drains)
            return
        }
        // Stays armed: reported once, until a drain starts.
        report(waiting: main.pendingCount, grace: grace, mainThreadWaits: thread.blockedReason)
    }

    private func report(waiting: Int, grace: UInt64, mainThreadWaits reason: String?) {
        reported.wrappingAdd(1, ordering: .relaxed)
        let doing = reason.map { "it is blocked in \($0)" } ?? "it runs code outside any drain of the main queue"
        ringletWarning("the main queue has had work waiting for \(grace / 1_000_000) ms and nothing drains it: \(waiting) "
            + "item(s) — closures, @MainActor jobs, sync calls onto it — run only on the main thread, and the main "
            + "thread is not in dispatchMain() (\(doing)). Call dispatchMain() at the end of main() (where the main "
            + "thread runs a loop of its own, Runtime.drainMainQueue() each time Runtime.mainQueueDescriptor() is "
            + "readable), or do not block the main thread while work it must run waits. The board profile key 'mainQueueGraceMilliseconds' "
            + "(RuntimeConfiguration.mainQueueGraceMilliseconds) sets this wait; 0 turns the report off")
    }
}
