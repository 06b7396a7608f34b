import Synchronization

/// Counts outstanding work: `enter()` adds one, `leave()` removes one; waiters and
/// notifications are released each time the count returns to zero.
/// Source-compatible with `Dispatch.DispatchGroup`.
///
/// A group has no owner, so waiting on it cannot raise anyone's QoS (use
/// `DispatchWorkItem.wait()` for that). `leave()` without `enter()` traps, and so does
/// releasing a group that still counts entered work.
// @unchecked Sendable: the count is atomic; notifications under `lock`.
public class DispatchGroup: DispatchObject, @unchecked Sendable {
    /// The count and the closures that hold the group, in one word, so `async(group:)`
    /// takes both with one atomic operation: the count of outstanding work in the high
    /// 32 bits (signed: below zero is a `leave()` too many), the closures of
    /// `async(group:)` that are queued or running in the low 32 (`enterForClosure`).
    private let state = Atomic<Int64>(0)
    private static let countUnit: Int64 = 1 << 32
    private static let closureUnit: Int64 = countUnit | 1
    private static let closureMask: Int64 = 0xFFFF_FFFF
    private let lock = FutexLock()
    private let emptied = FutexEvent()
    private var notifications: [(queue: DispatchQueue, work: DispatchWorkItem)] = []

    public override init() { super.init() }

    deinit {
        // Closures hold a reference while they count, so only `enter()`s can be left.
        let outstanding = Self.count(of: state.load(ordering: .acquiring))
        if outstanding > 0 {
            ringletMisuse("a DispatchGroup was released with \(outstanding) unbalanced enter(); every enter() "
                + "needs a leave() before the group is released")
        }
        lock.deallocate()
        emptied.deallocate()
    }

    @inline(__always)
    private static func count(of state: Int64) -> Int64 { state >> 32 }

    /// The outstanding work now.
    private var outstanding: Int64 { Self.count(of: state.load(ordering: .acquiring)) }

    /// Counts one more piece of outstanding work.
    public func enter() {
        state.wrappingAdd(Self.countUnit, ordering: .acquiringAndReleasing)
    }

    /// Counts one piece of work done; at zero, wakes waiters and submits notifications.
    /// Traps when there was no matching `enter()`.
    public func leave() {
        let remaining = Self.count(of: state.wrappingSubtract(Self.countUnit, ordering: .acquiringAndReleasing).newValue)
        if remaining > 0 { return }
        emptiedOrUnbalanced(remaining)
    }

    /// `enter()` for a closure of `async(group:)`, whose node then holds the group
    /// without a reference of its own: while any such closure counts, the group holds
    /// one reference to itself, taken by the first and dropped by the last
    /// (`leave(closures:of:)`), as GCD's groups do. A reference per node was a write to
    /// the group's header by the producer for every item and by the drainer for every
    /// run, the cache line the count is on (Measuring, "The group row"). The reference
    /// is taken after the count: no leave can drop it before, as this closure counts
    /// until it has run, and it runs only after this returns.
    @inline(__always)
    func enterForClosure() {
        let before = state.wrappingAdd(Self.closureUnit, ordering: .acquiringAndReleasing).oldValue
        if before & Self.closureMask == 0 { _ = Unmanaged.passUnretained(self).retain() }
    }

    /// Leaves `group` for `closures` closures of `async(group:)` that ran (one atomic
    /// operation for a serial drain's run of them, DispatchQueue+Drain.swift). When no
    /// closure counts any more, drops the group's reference to itself: that may free
    /// it, so the caller holds it only through `group`, which it must not use after.
    static func leave(closures: Int, of group: Unmanaged<DispatchGroup>) {
        let last = group._withUnsafeGuaranteedRef { $0.leaveForClosures(Int64(closures)) }
        if last { group.release() }
    }

    /// Whether the closures' count reached zero (the caller drops the reference).
    @inline(__always)
    private func leaveForClosures(_ closures: Int64) -> Bool {
        let after = state.wrappingSubtract(closures &* Self.closureUnit, ordering: .acquiringAndReleasing).newValue
        let remaining = Self.count(of: after)
        if remaining <= 0 { emptiedOrUnbalanced(remaining) }
        return after & Self.closureMask == 0
    }

    private func emptiedOrUnbalanced(_ remaining: Int64) {
        if remaining < 0 {
            ringletMisuse("DispatchGroup.leave() called more often than enter() (count would be "
                + "\(remaining)); balance every leave() with an earlier enter()")
        }
        lock.lock()
        let pending = outstanding == 0 ? notifications : []
        if !pending.isEmpty { notifications = [] }
        lock.unlock()
        emptied.post(wake: Int32.max)
        for (queue, work) in pending { queue.async(execute: work) }
    }

    /// Waits until the count is zero.
    public func wait() { _ = waitFor(timeoutNanoseconds: -1) }

    /// Waits until the count is zero or `timeout` passes.
    public func wait(timeout: DispatchTime) -> DispatchTimeoutResult {
        waitFor(timeoutNanoseconds: timeout.relativeNanoseconds)
    }

    /// Waits until the count is zero or the wall clock reaches `timeout`.
    public func wait(wallTimeout timeout: DispatchWallTime) -> DispatchTimeoutResult {
        waitFor(timeoutNanoseconds: timeout.relativeNanoseconds)
    }

    /// Returns once the count is zero, or once it has returned to zero since the call
    /// began (`emptied` counts returns to zero), even if an `enter()` followed at once.
    private func waitFor(timeoutNanoseconds: Int64) -> DispatchTimeoutResult {
        let start = emptied.snapshot
        if outstanding == 0 { return .success }
        let deadline = WaitDeadline(relativeNanoseconds: timeoutNanoseconds)
        return BlockingWait.perform(.group(self), timed: timeoutNanoseconds >= 0) {
            while true {
                let seen = emptied.snapshot
                if seen != start || outstanding == 0 { return .success }
                guard let remaining = deadline.remaining else { return .timedOut }
                _ = BlockingWait.sleep(on: emptied, seen: seen, timeoutNanoseconds: remaining)
            }
        }
    }

    /// Submits `work` to `queue` when the count next reaches zero (at once if it is zero).
    public func notify(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
                       queue: DispatchQueue, execute work: @escaping @Sendable () -> Void) {
        // GCD runs the block at the QoS of the thread that called notify.
        notify(queue: queue, work: DispatchWorkItem(qos: qos, flags: flags.union(.assignCurrentContext), block: work))
    }

    /// Submits the work item `work` to `queue` when the count next reaches zero.
    public func notify(queue: DispatchQueue, work: DispatchWorkItem) {
        // The notification continues the notifier's activity (Breadcrumb).
        if work.capturedCrumb == 0 { work.capturedCrumb = ThreadContext.current.submitCrumb }
        lock.lock()
        if outstanding == 0 {
            lock.unlock()
            queue.async(execute: work)
            return
        }
        notifications.append((queue, work))
        lock.unlock()
        // The count may have reached zero between the check and the append.
        if outstanding == 0 { flushIfEmpty() }
    }

    private func flushIfEmpty() {
        lock.lock()
        let pending = outstanding == 0 ? notifications : []
        if !pending.isEmpty { notifications = [] }
        lock.unlock()
        for (queue, work) in pending { queue.async(execute: work) }
    }
}
