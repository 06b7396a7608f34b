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
        let priority = resolvePriority(for: QoSPriority(.unspecified), flags: flags.union(.detached), itemQoS: qos)
        let barrier = flags.contains(.barrier) && !isRoot
        // The node is taken now, on the caller's thread, where waiting for a full pool
        // is allowed: the manager thread only pushes it and never waits. Pending from
        // now on, as far as the statistics go.
        let node = ThreadContext.withCurrent { context in
            context.counters.countSubmitted(priority.level)
            return RuntimeParts.withPool {
                $0.allocate(kind: .block, priority: priority, isBarrier: barrier, block: work, context: context)
            }
        }
        let target = PendingNode(node)
        schedule(at: deadline.uptimeNanoseconds, level: priority.level) { [self] in push(target.node) }
    }

    /// As `asyncAfter(deadline:...)` with a wall-clock deadline. The deadline is
    /// turned into the monotonic clock when this is called, so a later change of the
    /// wall clock does not move it.
    public func asyncAfter(wallDeadline: DispatchWallTime, qos: DispatchQoS = .unspecified,
                           flags: DispatchWorkItemFlags = [], execute work: @escaping @Sendable () -> Void) {
        asyncAfter(deadline: Self.monotonicDeadline(wallDeadline), qos: qos, flags: flags, execute: work)
    }

    /// Submits a work item once `deadline` has passed.
    public func asyncAfter(deadline: DispatchTime, execute workItem: DispatchWorkItem) {
        if deadline == .distantFuture { return }
        let node = PendingNode(makeWorkItemNode(workItem, group: nil))
        schedule(at: deadline.uptimeNanoseconds, level: node.node.pointee.priority.level) { [self] in push(node.node) }
    }

    /// Submits a work item once the wall clock reaches `wallDeadline`.
    public func asyncAfter(wallDeadline: DispatchWallTime, execute workItem: DispatchWorkItem) {
        asyncAfter(deadline: Self.monotonicDeadline(wallDeadline), execute: workItem)
    }

    private func schedule(at deadline: UInt64, level: QoSLevel, _ action: @escaping ManagerThread.TimerAction) {
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let now = MonotonicClock.nanoseconds
        let delay = deadline > now ? deadline - now : 0
        manager.submit(.oneShot(deadline: deadline, leeway: manager.leewayForAfter(delay: delay, level: level),
                                action: action))
    }

    private static func monotonicDeadline(_ wallDeadline: DispatchWallTime) -> DispatchTime {
        let remaining = wallDeadline.relativeNanoseconds
        if remaining < 0 { return .distantFuture }
        return DispatchTime(uptimeNanoseconds: MonotonicClock.nanoseconds &+ UInt64(remaining))
    }
}

/// A node taken at `asyncAfter` time, carried to the manager thread in the timer's
/// action (a raw pointer is not Sendable).
private struct PendingNode: @unchecked Sendable {
    let node: WorkNodeRef
    init(_ node: WorkNodeRef) { self.node = node }
}
