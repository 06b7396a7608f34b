/// The manager's timers and who each belongs to, owned in one place: every timer is
/// armed, disarmed, fired and moved here, so the windows (`TimerQueue`) and their
/// owners never disagree — an owner is cleared exactly when its timer leaves the
/// windows, and a slot reused by a newer timer is never touched through an old
/// handle. Manager thread only (`ManagerThread.timers`).
///
///   (1) arm --> armed --(2) disarm--> gone
///                 |--(3) due, one-shot--> gone        (4) move: armed, new handle
///                 |--(3) due, repeating--> armed under a new generation
///
///   (1) arm   (2) disarm   (3) due(at:) then settle   (4) move
struct TimerTable {
    /// Who a timer belongs to: what its fire does.
    struct Owner {
        enum Target {
            case action(ManagerThread.TimerAction)
            case target(ManagerTimerTarget)
            case source(DispatchSource)
        }
        var target: Target
        /// For wall-clock timers: (wall clock − monotonic clock) when the deadline was
        /// converted, so a clock change can move it by the difference.
        var wallOffset: Int64?
        /// Intervals of a repeating wall-clock timer that fell before the monotonic
        /// clock's zero (a deadline older than the boot), added to its first fire's count.
        var carriedFires: UInt64 = 0
    }

    /// A fire, its owner's bookkeeping done (`settle`).
    struct Settled {
        let target: Owner.Target
        /// The timer's handle from now on: nil once a one-shot has fired.
        let current: TimerQueue.Handle?
        let count: UInt64
        let deadline: UInt64
    }

    private var windows = TimerQueue()
    private var owners: [Owner?] = []
    /// The fires of the last `due(at:)`, its storage kept from one wake-up to the next.
    private var fired: [TimerQueue.Firing] = []

    var armedCount: Int { windows.armedCount }

    /// Adds a timer on the monotonic clock.
    mutating func arm(deadline: UInt64, leeway: UInt64, interval: UInt64, advance: UInt64,
                      owner: Owner) -> TimerQueue.Handle {
        let handle = windows.schedule(deadline: deadline, leeway: leeway, interval: interval, advance: advance)
        while owners.count <= handle.slot { owners.append(nil) }
        owners[handle.slot] = owner
        return handle
    }

    /// Removes the timer `handle` names, if it is still the armed one under that
    /// generation; a one-shot that already fired, or a slot a newer timer took, is
    /// left alone. Returns whether it removed one.
    @discardableResult
    mutating func disarm(_ handle: TimerQueue.Handle) -> Bool {
        guard windows.isLive(handle) else { return false }
        windows.cancel(handle)
        owners[handle.slot] = nil
        return true
    }

    func isArmed(_ handle: TimerQueue.Handle) -> Bool { windows.isLive(handle) }

    /// The deadline the timer `handle` names waits for, on the monotonic clock (nil: not armed).
    func deadline(of handle: TimerQueue.Handle) -> UInt64? { windows.deadline(of: handle) }

    /// The instant the manager must wake at (`TimerQueue.nextAim`).
    mutating func nextAim() -> UInt64? { windows.nextAim() }

    /// When the first armed window opens (its deadline), nil when none is armed.
    mutating func earliestDeadline() -> UInt64? { windows.earliestDeadline() }

    /// Takes every timer whose window contains `now` out of the windows (a repeating
    /// one stays under a new generation). The caller settles each, then runs it: a
    /// fire's action may arm or disarm timers, so none runs while the table is being
    /// changed. Allocates only to grow past the largest batch so far.
    mutating func due(at now: UInt64) -> [TimerQueue.Firing] {
        fired.removeAll(keepingCapacity: true)
        windows.fire(at: now, into: &fired)
        return fired
    }

    /// The owner's side of one fire: a one-shot's owner is cleared, a repeating one's
    /// carried count is spent. Nil when the owner was cleared meanwhile.
    mutating func settle(_ firing: TimerQueue.Firing) -> Settled? {
        let slot = firing.handle.slot
        guard let owner = owners[slot] else { return nil }
        var current: TimerQueue.Handle?
        if case .source = owner.target {
            current = windows.currentHandle(slot: slot)
            if current == nil {
                owners[slot] = nil
            } else if owner.carriedFires > 0 {
                owners[slot]?.carriedFires = 0
            }
        } else {
            owners[slot] = nil
        }
        return Settled(target: owner.target, current: current, count: firing.count &+ owner.carriedFires,
                       deadline: firing.deadline)
    }

    /// Moves every wall-clock timer by how much the wall clock moved against the
    /// monotonic clock (`offset` is the new difference); `moved` gets each source
    /// whose handle changed.
    mutating func moveWallClockTimers(offset: Int64, _ moved: (DispatchSource, TimerQueue.Handle) -> Void) {
        for slot in owners.indices {
            guard var owner = owners[slot], let old = owner.wallOffset, old != offset,
                  let handle = windows.currentHandle(slot: slot),
                  let deadline = windows.deadline(of: handle) else { continue }
            let target = max(Int64(bitPattern: deadline) &+ (old &- offset), 0)
            guard let newHandle = windows.move(handle, to: UInt64(target)) else { continue }
            owner.wallOffset = offset
            owners[slot] = owner
            if case .source(let source) = owner.target { moved(source, newHandle) }
        }
    }

    // MARK: For the live dump

    /// Every armed timer, soonest deadline first (allocates).
    func armedEntries() -> [(slot: Int, deadline: UInt64, leeway: UInt64, interval: UInt64)] {
        windows.armedEntries()
    }

    func owner(slot: Int) -> Owner? { slot < owners.count ? owners[slot] : nil }

    /// The sources that own an armed timer.
    var timerSources: [DispatchSource] {
        var sources: [DispatchSource] = []
        for owner in owners {
            if let owner, case .source(let source) = owner.target { sources.append(source) }
        }
        return sources
    }
}
