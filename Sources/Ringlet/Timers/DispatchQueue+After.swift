extension DispatchQueue {
    /// Submits `work` to this queue once `deadline` has passed — never before. The
    /// manager thread keeps it in its timer structure (no source, no thread per
    /// call) and may let it run up to a tenth of the delay late (1 ms to 60 s, as
    /// GCD's `dispatch_after`; more for background and utility QoS), so that it
    /// shares a wake-up with other timers. Detached by default, as in GCD: it takes
    /// no QoS from the submitting thread unless `qos` says so.
    public func asyncAfter(deadline: DispatchTime, qos: DispatchQoS = .unspecified,
                           flags: DispatchWorkItemFlags = [], execute work: @escaping @Sendable () -> Void) {
        // GCD: a deadline that never comes schedules nothing.
        if deadline == .distantFuture { return }
        scheduleBlock(at: deadline.uptimeNanoseconds, wall: false, qos: qos, flags: flags, work)
    }

    /// As `asyncAfter(deadline:...)` with a wall-clock deadline: when the wall clock
    /// is set (a board without an RTC at NTP sync), the work still runs when the
    /// clock reads `wallDeadline`.
    public func asyncAfter(wallDeadline: DispatchWallTime, qos: DispatchQoS = .unspecified,
                           flags: DispatchWorkItemFlags = [], execute work: @escaping @Sendable () -> Void) {
        guard let wall = wallDeadline.nanosecondsSinceEpoch else { return }
        scheduleBlock(at: UInt64(max(wall, 0)), wall: true, qos: qos, flags: flags, work)
    }

    /// Submits a work item once `deadline` has passed.
    public func asyncAfter(deadline: DispatchTime, execute workItem: DispatchWorkItem) {
        if deadline == .distantFuture { return }
        schedule(at: deadline.uptimeNanoseconds, wall: false, node: makeWorkItemNode(workItem, group: nil))
    }

    /// Submits a work item once the wall clock reaches `wallDeadline` (following
    /// changes of the clock).
    public func asyncAfter(wallDeadline: DispatchWallTime, execute workItem: DispatchWorkItem) {
        guard let wall = wallDeadline.nanosecondsSinceEpoch else { return }
        schedule(at: UInt64(max(wall, 0)), wall: true, node: makeWorkItemNode(workItem, group: nil))
    }

    /// The node of a closure submitted with `asyncAfter`: detached unless `qos` says
    /// otherwise. Taken now, on the caller's thread, where waiting for a full pool is
    /// allowed: the manager thread only pushes it and never waits. Pending from now
    /// on, as far as the statistics go.
    private func scheduleBlock(at deadline: UInt64, wall: Bool, qos: DispatchQoS, flags: DispatchWorkItemFlags,
                               _ work: @escaping @Sendable () -> Void) {
        let priority = resolvePriority(for: QoSPriority(.unspecified), flags: flags.union(.detached), itemQoS: qos)
        let barrier = flags.contains(.barrier) && !isRoot
        let node = ThreadContext.withCurrent { context in
            context.counters.countSubmitted(priority.level)
            context.traceEnqueued(queueNumber: number, priority)
            return RuntimeParts.withPool {
                $0.allocate(kind: .block, priority: priority, isBarrier: barrier, block: work, context: context)
            }
        }
        schedule(at: deadline, wall: wall, node: node)
    }

    /// Hands the timer to the manager, which pushes `node` when it fires. `deadline`
    /// is on the monotonic clock, or on the wall clock when `wall`.
    private func schedule(at deadline: UInt64, wall: Bool, node: WorkNodeRef) {
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let now = wall ? UInt64(max(WallClock.nanoseconds, 0)) : MonotonicClock.nanoseconds
        let delay = deadline > now ? deadline - now : 0
        let level = node.pointee.priority.level
        let pending = PendingNode(node)
        let leeway = manager.leewayForAfter(delay: delay, level: level)
        let request = ManagerThread.Request.oneShot(deadline: deadline, leeway: leeway, wall: wall,
                                                    action: { [self] in push(pending.node) })
        // A wall-clock deadline is converted by the manager: no quiet hand-over for it.
        manager.submit(request, neededBy: wall ? nil : TimerQueue.aim(deadline: deadline, leeway: leeway))
    }
}

/// A node taken at `asyncAfter` time, carried to the manager thread in the timer's
/// action (a raw pointer is not Sendable).
// @unchecked Sendable: the node belongs to the timer until the manager pushes it, once.
private struct PendingNode: @unchecked Sendable {
    let node: WorkNodeRef
    init(_ node: WorkNodeRef) { self.node = node }
}
