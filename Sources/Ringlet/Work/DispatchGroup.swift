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
    private let count = Atomic<Int>(0)
    private let lock = FutexLock()
    private let emptied = FutexEvent()
    private var notifications: [(queue: DispatchQueue, work: DispatchWorkItem)] = []

    public override init() { super.init() }

    deinit {
        let outstanding = count.load(ordering: .acquiring)
        if outstanding > 0 {
            ringletMisuse("a DispatchGroup was released with \(outstanding) unbalanced enter(); every enter() "
                + "needs a leave() before the group is released")
        }
        lock.deallocate()
        emptied.deallocate()
    }

    /// Counts one more piece of outstanding work.
    public func enter() {
        count.wrappingAdd(1, ordering: .acquiringAndReleasing)
    }

    /// Counts one piece of work done; at zero, wakes waiters and submits notifications.
    /// Traps when there was no matching `enter()`.
    public func leave() { leave(times: 1) }

    /// Counts `times` pieces of work done at once: one atomic operation where a serial
    /// drain ran several items of this group in a row (DispatchQueue+Drain.swift).
    @inline(__always)
    func leave(times: Int) {
        let remaining = count.wrappingSubtract(times, ordering: .acquiringAndReleasing).newValue
        if remaining > 0 { return }
        emptiedOrUnbalanced(remaining)
    }

    private func emptiedOrUnbalanced(_ remaining: Int) {
        if remaining < 0 {
            ringletMisuse("DispatchGroup.leave() called more often than enter() (count would be "
                + "\(remaining)); balance every leave() with an earlier enter()")
        }
        lock.lock()
        let pending = count.load(ordering: .acquiring) == 0 ? notifications : []
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
        if count.load(ordering: .acquiring) == 0 { return .success }
        let deadline = WaitDeadline(relativeNanoseconds: timeoutNanoseconds)
        return BlockingWait.perform(.group(self), timed: timeoutNanoseconds >= 0) {
            while true {
                let seen = emptied.snapshot
                if seen != start || count.load(ordering: .acquiring) == 0 { return .success }
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
        if count.load(ordering: .acquiring) == 0 {
            lock.unlock()
            queue.async(execute: work)
            return
        }
        notifications.append((queue, work))
        lock.unlock()
        // The count may have reached zero between the check and the append.
        if count.load(ordering: .acquiring) == 0 { flushIfEmpty() }
    }

    private func flushIfEmpty() {
        lock.lock()
        let pending = count.load(ordering: .acquiring) == 0 ? notifications : []
        if !pending.isEmpty { notifications = [] }
        lock.unlock()
        for (queue, work) in pending { queue.async(execute: work) }
    }
}
