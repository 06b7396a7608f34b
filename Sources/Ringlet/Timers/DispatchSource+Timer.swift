import Synchronization

/// A timer source's schedule, as the program set it.
struct TimerSpec {
    /// The first deadline: CLOCK_MONOTONIC nanoseconds, or wall-clock nanoseconds
    /// since 1970 when `wall`; nil: never.
    var deadline: UInt64?
    var wall: Bool
    /// Nanoseconds between fires; 0: one fire.
    var interval: UInt64
    var leeway: UInt64
    var strict: Bool
}

extension DispatchSource {
    /// Sets (or replaces) the timer's schedule: the first fire at `deadline`, then
    /// every `interval` on the same phase (`.never`: once). Fires never come early
    /// and come at most `leeway` late (more for background and utility queues, never
    /// for `.strict` timers). Pending fires are forgotten. Takes effect at once on an
    /// active timer.
    public func schedule(deadline: DispatchTime, repeating interval: DispatchTimeInterval,
                         leeway: DispatchTimeInterval) {
        setSchedule(deadline: deadline == .distantFuture ? nil : deadline.uptimeNanoseconds, wall: false,
                    interval: Self.nanoseconds(interval), leeway: Self.nanoseconds(leeway))
    }

    public func schedule(deadline: DispatchTime, repeating interval: Double, leeway: DispatchTimeInterval) {
        schedule(deadline: deadline, repeating: Self.interval(seconds: interval), leeway: leeway)
    }

    /// As `schedule(deadline:...)` on the wall clock: when someone sets the clock (a
    /// board without an RTC at NTP sync), the timer follows it.
    public func schedule(wallDeadline: DispatchWallTime, repeating interval: DispatchTimeInterval,
                         leeway: DispatchTimeInterval) {
        let deadline = wallDeadline.nanosecondsSinceEpoch.map { UInt64(max($0, 0)) }
        setSchedule(deadline: deadline, wall: true, interval: Self.nanoseconds(interval),
                    leeway: Self.nanoseconds(leeway))
    }

    public func schedule(wallDeadline: DispatchWallTime, repeating interval: Double, leeway: DispatchTimeInterval) {
        schedule(wallDeadline: wallDeadline, repeating: Self.interval(seconds: interval), leeway: leeway)
    }

    private func setSchedule(deadline: UInt64?, wall: Bool, interval: UInt64, leeway: UInt64) {
        guard case .timer(let strict) = kind else {
            ringletMisuse("schedule(...) on \(name): only timer sources have a schedule")
        }
        let spec = TimerSpec(deadline: deadline, wall: wall, interval: interval, leeway: leeway, strict: strict)
        let active = lock.withLock { () -> Bool in
            timerSpec = spec
            timerSpecUnapplied = true
            pending.store(0, ordering: .releasing)
            stagedDeadline.store(0, ordering: .relaxed)
            return activated && !isCancelled
        }
        if active { manager.submit(.reschedule(self)) }
    }

    /// Called by the manager thread when the timer's window is reached; `due`: the
    /// deadline of a staged strict timer, still ahead (TimerQueue), which the delivery
    /// waits for.
    func timerFired(count: UInt64, due: UInt64? = nil) {
        if let due { stagedDeadline.store(due, ordering: .releasing) }
        post(UInt(truncatingIfNeeded: count))
    }

    /// A strict timer's delivery, on its worker, once it has taken what is pending: when
    /// a staged fire's deadline is still ahead, sleeps until it with no timer slack, so
    /// the handler starts after one wake-up (this thread's) rather than the manager's
    /// and then a worker's. Never early: the manager stores the deadline before it
    /// merges the fire, so a delivery that took the fire sees it. A deadline already
    /// passed is inert, so the value stays until a delivery has waited for it
    /// (a delivery that took only earlier fires may wait too: at most the advance,
    /// never early). Counted in `RuntimeStatistics.strictTimerFiresStaged`.
    func waitForStagedDeadline() {
        let due = stagedDeadline.load(ordering: .acquiring)
        if due == 0 { return }
        let ahead = MonotonicClock.nanoseconds < due
        if ahead { MonotonicClock.sleep(until: due) }
        if stagedDeadline.compareExchange(expected: due, desired: 0, ordering: .relaxed).exchanged {
            StrictTimerStages.record(arrivedAhead: ahead)
        }
    }

    /// `.never` and negative intervals mean "once" (0).
    private static func nanoseconds(_ interval: DispatchTimeInterval) -> UInt64 {
        if interval == .never { return 0 }
        let value = interval.offsetNanoseconds
        return value > 0 ? UInt64(value) : 0
    }

    private static func interval(seconds: Double) -> DispatchTimeInterval {
        if !(seconds > 0) || seconds.isInfinite { return .never }
        let nanoseconds = seconds * 1e9
        return nanoseconds >= Double(Int64.max) ? .never : .nanoseconds(Int(nanoseconds))
    }
}

/// How staged strict-timer deliveries went (`RuntimeStatistics.strictTimerFiresStaged`
/// and `strictTimerFiresReachedLate`): one relaxed increment or two per fire.
enum StrictTimerStages {
    static let staged = Atomic<Int>(0)
    static let reachedLate = Atomic<Int>(0)

    static var stagedCount: Int { staged.load(ordering: .relaxed) }
    static var reachedLateCount: Int { reachedLate.load(ordering: .relaxed) }

    static func record(arrivedAhead: Bool) {
        staged.wrappingAdd(1, ordering: .relaxed)
        if !arrivedAhead { reachedLate.wrappingAdd(1, ordering: .relaxed) }
    }
}
