/// Cycles of `sync` waits: thread 1 runs an item of serial queue A and syncs onto
/// B, while thread 2 runs an item of B and syncs onto A. Neither wait has a timeout
/// and each waits for a slot the other holds: nothing can ever end them. Every
/// contended `sync` notes, while it waits, the queue it waits at and the serial
/// queues its thread holds; a caller about to wait first follows the holders of the
/// queue it needs through their own waits, and traps naming the cycle when it comes
/// back to itself. The last of the cycle's callers to arrive sees it: the others
/// were noted before it looked. A note goes when its wait ends — taken off by whoever
/// ends it, before the caller wakes — so a wait about to end is never seen as stuck. Only contended syncs, which sleep anyway, pay for it:
/// one lock and a walk over the few waits there are.
final class SyncWaitCycles: @unchecked Sendable {
    static let shared = SyncWaitCycles()

    /// One waiting caller.
    struct Wait {
        let token: UInt64
        let thread: Unmanaged<ThreadContext>
        let threadID: Int32
        /// The queue whose slot it waits for (alive: its FIFO holds the caller's node).
        let at: Unmanaged<DispatchQueue>
        /// The queue `sync` was called on.
        let onto: Unmanaged<DispatchQueue>
        /// The serial queues the caller holds, alive while it waits.
        let holds: [Unmanaged<DispatchQueue>]
    }

    private let lock = FutexLock()
    private var waits: [Wait] = []
    private var nextToken: UInt64 = 0

    /// Notes the calling thread's wait at `queue` for `sync` onto `onto`, holding
    /// `holds`; traps when the wait closes a cycle. Returns the token for `ended`.
    func begin(at queue: DispatchQueue, onto: DispatchQueue, holds: [Unmanaged<DispatchQueue>],
               context: ThreadContext) -> UInt64 {
        let (token, report): (UInt64, String?) = lock.withLock {
            nextToken &+= 1
            let wait = Wait(token: nextToken, thread: Unmanaged.passUnretained(context),
                            threadID: ThreadControl.threadID, at: Unmanaged.passUnretained(queue),
                            onto: Unmanaged.passUnretained(onto), holds: holds)
            waits.append(wait)
            // Made under the lock: the waits of a cycle stay noted (and their queues
            // alive) while they are read.
            return (wait.token, cycleLocked(from: wait).map(Self.describe(cycle:)))
        }
        if let report { ringletMisuse(report) }
        return token
    }

    /// The wait noted under `token` ended.
    func ended(_ token: UInt64) {
        lock.withLock {
            if let index = waits.lastIndex(where: { $0.token == token }) { waits.remove(at: index) }
        }
    }

    /// The waits from `start` through the holders of what each waits at, when they
    /// lead back to `start`.
    private func cycleLocked(from start: Wait) -> [Wait]? {
        var path = [start]
        var current = start
        while path.count <= waits.count {
            let needed = current.at.toOpaque()
            guard let holder = waits.first(where: { wait in
                wait.token != current.token && wait.holds.contains { $0.toOpaque() == needed }
            }) else { return nil }
            if holder.token == start.token { return path }
            if path.contains(where: { $0.token == holder.token }) { return nil }  // a cycle not through us
            path.append(holder)
            current = holder
        }
        return nil
    }

    /// Wait i waits at a queue wait i + 1 holds (the last: one the first holds).
    private static func describe(cycle: [Wait]) -> String {
        var lines: [String] = []
        for (index, wait) in cycle.enumerated() {
            let held = cycle[(index + cycle.count - 1) % cycle.count].at.takeUnretainedValue()
            let onto = wait.onto.takeUnretainedValue()
            let at = wait.at.takeUnretainedValue()
            let through = onto === at ? "" : " (waiting at its target '\(at.label)')"
            lines.append("\(describe(wait)) holds queue '\(held.label)' and waits in sync onto queue "
                + "'\(onto.label)'\(through)")
        }
        return "deadlock: a cycle of sync calls, each waiting for a queue the next one holds: "
            + lines.joined(separator: "; ") + ". None of them can ever return. Make one of them async, or take "
            + "the queues in one order everywhere"
    }

    private static func describe(_ wait: Wait) -> String {
        let context = wait.thread.takeUnretainedValue()
        if let worker = context.worker { return "thread '\(worker.name)'" }
        if context.isMainThread { return "the main thread" }
        return ThreadControl.threadName(wait.threadID).map { "thread '\($0)' (\(wait.threadID))" }
            ?? "thread \(wait.threadID)"
    }
}
