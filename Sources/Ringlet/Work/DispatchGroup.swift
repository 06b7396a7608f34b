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
    /// The count, the closures that hold the group and the generation, in one word
    /// (`GroupState`): `async(group:)` takes the first two with one atomic operation,
    /// and the leave that brings the count to zero moves the generation in the same
    /// operation, so a waiter can tell a return to zero after its wait began from one
    /// before it whose wake-up is late.
    private let state = Atomic<Int64>(0)
    private let lock = FutexLock()
    private let emptied = FutexEvent()
    private var notifications: [(queue: DispatchQueue, work: DispatchWorkItem)] = []

    public override init() { super.init() }

    deinit {
        // Closures hold a reference while they count, so only `enter()`s can be left.
        let outstanding = GroupState.count(of: state.load(ordering: .acquiring))
        if outstanding > 0 {
            ringletMisuse("a DispatchGroup was released with \(outstanding) unbalanced enter(); every enter() "
                + "needs a leave() before the group is released")
        }
        lock.deallocate()
        emptied.deallocate()
    }

    /// The outstanding work now.
    private var outstanding: Int64 { GroupState.count(of: state.load(ordering: .acquiring)) }

    /// Counts one more piece of outstanding work.
    public func enter() { enter(closures: 0) }

    /// Counts one more piece of outstanding work, and `closures` (0 or 1) more closures
    /// holding the group; returns the state before. A compare-and-swap, not an add: an
    /// add that takes the count from zero would borrow from the generation.
    @inline(__always) @discardableResult
    private func enter(closures: Int64) -> Int64 {
        var current = state.load(ordering: .relaxed)
        while true {
            if GroupState.count(of: current) >= GroupState.maximumCount {
                ringletMisuse("DispatchGroup.enter(): \(GroupState.count(of: current)) entries are outstanding, the "
                    + "most a group counts; leave() some first, or split the work among groups")
            }
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: GroupState.entered(current, closures: closures),
                ordering: .acquiringAndReleasing)
            if exchanged { return current }
            current = original
        }
    }

    /// Counts one piece of work done; at zero, wakes waiters and submits notifications.
    /// Traps when there was no matching `enter()`.
    public func leave() {
        let remaining = GroupState.count(of: state.wrappingAdd(GroupState.leaveDelta(closures: 0),
                                                               ordering: .acquiringAndReleasing).newValue)
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
        let before = enter(closures: 1)
        if GroupState.closures(of: before) == 0 { _ = Unmanaged.passUnretained(self).retain() }
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
        let after = state.wrappingAdd(GroupState.leaveDelta(closures: closures),
                                      ordering: .acquiringAndReleasing).newValue
        let remaining = GroupState.count(of: after)
        if remaining <= 0 { emptiedOrUnbalanced(remaining) }
        return GroupState.closures(of: after) == 0
    }

    private func emptiedOrUnbalanced(_ remaining: Int64) {
        if remaining < 0 {
            ringletMisuse("DispatchGroup.leave() called more often than enter() (count would be "
                + "\(remaining)); balance every leave() with an earlier enter()")
        }
        #if DEBUG
        _ = Self.hook.call(.emptiedBeforeWake(group: UInt(bitPattern: ObjectIdentifier(self).hashValue)))
        #endif
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
    /// began (the generation moved), even if an `enter()` followed at once. A wake-up
    /// alone proves nothing: the leave that posts it may have brought the count to
    /// zero before this call began and been preempted before its post.
    private func waitFor(timeoutNanoseconds: Int64) -> DispatchTimeoutResult {
        let start = state.load(ordering: .acquiring)
        if GroupState.count(of: start) == 0 { return .success }
        let deadline = WaitDeadline(relativeNanoseconds: timeoutNanoseconds)
        return BlockingWait.perform(.group(self), timed: timeoutNanoseconds >= 0) {
            while true {
                let seen = emptied.snapshot
                let now = state.load(ordering: .acquiring)
                if GroupState.count(of: now) == 0 || GroupState.generation(of: now) != GroupState.generation(of: start) {
                    return .success
                }
                guard let remaining = deadline.remaining else { return .timedOut }
                #if DEBUG
                _ = Self.hook.call(.waiterWillSleep(group: UInt(bitPattern: ObjectIdentifier(self).hashValue)))
                #endif
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

/// The layout of a group's state word, from the low bits up:
///
/// - 27 bits: the closures of `async(group:)` holding the group (a node each, and a
///   board has at most 2^26 nodes: the `workNodes` key).
/// - 29 bits: the count of outstanding work, negated (0 when nothing is outstanding,
///   all ones for one item). A leave adds one here, so the leave that brings the
///   count to zero carries out of the field:
/// - 8 bits: the generation, which that carry moves, in the same atomic operation
///   (libdispatch's groups move theirs the same way). An enter must not borrow from
///   it, so enters compare-and-swap. It wraps after 256 returns to zero; a waiter that
///   slept through exactly 256 of them waits for the next.
enum GroupState {
    static let closureBits: Int64 = 27
    static let countBits: Int64 = 29
    static let closureMask: Int64 = (1 << closureBits) - 1
    static let countFieldMask: Int64 = (1 << countBits) - 1
    static let countUnit: Int64 = 1 << closureBits
    static let generationShift: Int64 = closureBits + countBits
    /// The most entries a group counts: half the field, so that a leave too many
    /// still reads as a count below zero.
    static let maximumCount: Int64 = (1 << (countBits - 1)) - 1

    @inline(__always)
    static func closures(of state: Int64) -> Int64 { state & closureMask }

    /// The outstanding count; below zero after a leave too many.
    @inline(__always)
    static func count(of state: Int64) -> Int64 {
        let field = (state >> closureBits) & countFieldMask
        // The field holds -count in `countBits` bits, two's complement.
        return field >= 1 << (countBits - 1) ? (1 << countBits) - field : -field
    }

    @inline(__always)
    static func generation(of state: Int64) -> Int64 { (state >> generationShift) & 0xFF }

    /// `state` with one more entry and `closures` more closures; the generation kept.
    @inline(__always)
    static func entered(_ state: Int64, closures: Int64) -> Int64 {
        let generation = state & ~(countFieldMask << closureBits | closureMask)
        let field = ((state >> closureBits) &- 1) & countFieldMask
        return generation | field << closureBits | (Self.closures(of: state) + closures)
    }

    /// What a leave of `closures` closures (0: a plain `leave()`) adds to the word.
    @inline(__always)
    static func leaveDelta(closures: Int64) -> Int64 {
        (closures == 0 ? 1 : closures) &* countUnit &- closures
    }
}

#if DEBUG
extension DispatchGroup {
    /// A test hook on the window between a leave that brought the count to zero and
    /// its wake-up, and on a waiter about to sleep (GroupTests); `group` tells the
    /// groups apart (`ObjectIdentifier`'s hash).
    enum HookPoint: Sendable {
        case emptiedBeforeWake(group: UInt)
        case waiterWillSleep(group: UInt)
    }

    static let hook = TestHook<HookPoint, Void>()
}
#endif
