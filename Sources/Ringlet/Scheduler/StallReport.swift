/// The text the stall watch prints: each pool thread with what it waits on or how
/// long it has been on its item and the queue it runs, then the queues and QoS
/// classes that hold pending work, then what to change.
enum StallReport {
    /// One pool thread, as the watch saw it (under the scheduler lock).
    struct ThreadState {
        let name: String
        let band: WorkerBand
        let state: Worker.State
        let blockedOn: WaitReason?
        /// Found blocked in the kernel on its item, and covered by the reserve.
        let coveredInKernel: Bool
        /// The queue a blocked thread was running work of (it keeps it alive).
        let blockedQueue: DispatchQueue?
        /// The address of the queue a running thread runs work of (looked up in the
        /// registry: it may be gone by now).
        let queueAddress: UInt
        /// Nanoseconds this thread has been on the same item (as far as the watch saw).
        let onItemFor: UInt64
        /// The QoS of the item a running thread runs.
        var priority = QoSPriority(.unspecified)
        /// The breadcrumb of the item it runs (0: none).
        var crumb: UInt64 = 0
    }

    struct Snapshot {
        let threads: [ThreadState]
        /// Queues whose wake-up token waits in a root run queue, and its QoS.
        let tokens: [(queue: DispatchQueue, level: QoSLevel)]
        /// Items submitted straight to global queues, per `QoSLevel` raw value.
        let looseItems: [Int]
        /// Per QoS class ordinal: nanoseconds since progress was last seen.
        let waitedPerClass: [UInt64]
        let reserveCount: Int
        /// Nodes in the root run queues.
        let runnable: Int

        /// Work waits somewhere: in a root run queue, or behind a blocked drainer.
        var hasPendingWork: Bool {
            runnable > 0 || threads.contains { $0.blockedQueue?.hasPendingWork ?? false }
        }
    }

    /// Work of `levels` has waited the grace period with no progress: a warning.
    static func reportStall(of levels: [QoSLevel], _ snapshot: Snapshot, configuration: RuntimeConfiguration) {
        var names = ""
        for level in levels { names += (names.isEmpty ? "" : ", ") + level.name }
        let waited = levels.map { snapshot.waitedPerClass[RunQueueIndex.classOrdinal($0)] }.max() ?? 0
        var text = "Ringlet stall report: \(names) work has waited \(seconds(waited)) s and no thread that may run "
            + "it has taken any (the other bands cannot run it: strict QoS)\n"
        text += body(snapshot)
        let lowOnly = levels.allSatisfy { $0 == .utility || $0 == .background }
        let bandKey = lowOnly ? "'lowQoSWorkers' (workers for utility and background work)" : "'workersPerCore'"
        if snapshot.threads.contains(where: { $0.state == .blocked }) {
            text += "  what to change: threads that may run this work are blocked in waits (which this work may be "
                + "the one to end). Raise 'reservePerCore' (threads that cover blocked workers) or \(bandKey) in "
                + "the board profile, or avoid waits that depend on queued work of the same QoS.\n"
        } else {
            text += "  what to change: every thread that may run this work is busy with a long item. Split long "
                + "items, or raise \(bandKey) in the board profile.\n"
        }
        writeToStandardError(text)
        ringletWarning("stall: \(names) work is not making progress (see the report above); the runtime keeps "
            + "waiting, since the items holding the threads may still finish")
    }

    /// Every pool thread is blocked while work is pending. Stops the process when
    /// only queued work could end the waits; else warns and keeps waiting.
    static func reportDeadlock(_ snapshot: Snapshot, configuration: RuntimeConfiguration) {
        let count = snapshot.threads.count
        var text = "Ringlet deadlock report: all \(count) pool threads are blocked in waits without a timeout, "
            + "nothing has run for \(configuration.deadlockGraceMilliseconds) ms, and work is pending\n"
        text += body(snapshot)
        writeToStandardError(text)
        let fatal = snapshot.threads.allSatisfy { $0.blockedOn.map(endsOnlyThroughQueuedWork) ?? false }
        let summary = "all \(count) pool threads (\(count - snapshot.reserveCount) workers + \(snapshot.reserveCount) "
            + "reserve) are blocked"
        if fatal {
            ringletMisuse("deadlock: \(summary) in waits that only queued work could end, and no thread is left to "
                + "run it; see the report above. Raise 'reservePerCore' in the board profile, or avoid blocking "
                + "waits (sync, DispatchWorkItem.wait) that depend on queued work.")
        }
        ringletWarning("possible deadlock: \(summary) while work is pending (see the report above). A thread "
            + "outside the pool may still end their waits (a semaphore or group it signals), so the runtime keeps "
            + "waiting. Raise 'reservePerCore' in the board profile, or avoid blocking waits that depend on "
            + "queued work.")
    }

    /// Whether only queued work (run by pool threads) can end `reason`.
    static func endsOnlyThroughQueuedWork(_ reason: WaitReason) -> Bool {
        switch reason {
        case .semaphore, .group: return false
        case .workItem, .nodePool: return true
        case .sync(_, let queue):
            // A queue that leads to the main queue is drained by the main thread.
            var cursor: DispatchQueue? = queue
            while let current = cursor {
                if current.isMain { return false }
                cursor = current.currentTarget
            }
            return true
        }
    }

    /// The threads and the pending work, one per line: the live dump's own sections
    /// (Observe/DumpSections.swift), so a report and a dump read alike.
    private static func body(_ snapshot: Snapshot) -> String {
        DumpSections.threads(snapshot.threads, heading: "pool threads", durationsKnown: true)
            + DumpSections.pendingWork(looseItems: snapshot.looseItems, heading: "pending work")
    }

    /// "2.0": nanoseconds as seconds with one decimal, without floating-point printing
    /// (which Embedded Swift lacks).
    static func seconds(_ nanoseconds: UInt64) -> String {
        let tenths = nanoseconds / 100_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
