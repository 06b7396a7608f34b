import Synchronization

// The manager thread's side of timers: arming one (an asyncAfter item, a timer
// source, the stall watch's tick) in the timer structure, keeping exactly one
// io_uring timeout armed for the earliest window, and firing every timer whose
// window contains the instant the manager woke. Manager thread only, but for
// `leewayForAfter`.

extension ManagerThread {
    /// The leeway a one-shot gets: GCD's `dispatch_after` rule (a tenth of the delay,
    /// 1 ms to 60 s) widened by the QoS policy.
    func leewayForAfter(delay: UInt64, level: QoSLevel) -> UInt64 {
        let gcd = min(max(delay / 10, 1_000_000), 60_000_000_000)
        return leewayPolicy.leeway(requested: gcd, period: delay, level: level, strict: false)
    }

    /// Adds a timer; a wall-clock deadline is converted to the monotonic clock with
    /// today's offset, which is kept to follow later changes of the clock.
    @discardableResult
    func armTimer(deadline: UInt64, wall: Bool, interval: UInt64, leeway: UInt64, advance: UInt64 = 0,
                  owner: TimerTable.Owner.Target) -> TimerQueue.Handle {
        var monotonic = deadline
        var offset: Int64?
        var carried: UInt64 = 0
        if wall {
            watchClockChanges()
            let now = Self.wallClockOffset()
            offset = now
            let converted = Int64(bitPattern: deadline) &- now
            if converted < 0 && interval > 0 {
                // Older than the boot: the first deadline at or after the monotonic zero,
                // the intervals skipped to reach it counted in the first fire (`data`).
                let behind = UInt64(bitPattern: 0 &- converted)
                carried = (behind + interval - 1) / interval
                monotonic = carried &* interval &- behind
            } else {
                monotonic = UInt64(max(converted, 0))
            }
        }
        return timers.arm(deadline: monotonic, leeway: leeway, interval: interval, advance: advance,
                          owner: TimerTable.Owner(target: owner, wallOffset: offset, carriedFires: carried))
    }

    /// Removes a timer if it is still armed (`TimerTable.disarm`); returns whether it was.
    @discardableResult
    func disarmTimer(_ handle: TimerQueue.Handle) -> Bool {
        timers.disarm(handle)
    }

    /// Wall clock minus monotonic clock, in nanoseconds.
    static func wallClockOffset() -> Int64 {
        WallClock.nanoseconds &- Int64(bitPattern: MonotonicClock.nanoseconds)
    }

    /// Keeps exactly one timeout armed, at `TimerQueue.nextAim`: a margin before the
    /// end of the earliest window (never before its start).
    func rearmTimeout(_ ring: Ring) {
        var next = timers.nextAim()
        if let band = bandDeadline(), band < next ?? .max { next = band }
        lock.withLock { armedTimers = timers.armedCount }
        if next == armedDeadline { return }
        if armedDeadline != nil {
            retrying(ring) { () throws(Errno) in
                try ring.prepareTimeoutRemove(target: userData(.timeout, timeoutGeneration),
                                              userData: userData(.timeoutRemove, timeoutGeneration))
            }
        }
        armedDeadline = next
        guard let next else { return }
        timeoutGeneration &+= 1
        retrying(ring) { () throws(Errno) in
            try ring.prepareTimeout(deadline: next, userData: userData(.timeout, timeoutGeneration))
        }
    }

    /// Runs the action of every timer whose window contains `now`. Called inside the
    /// reap's wake batch: the workers these pushes wake are woken once all are pushed
    /// (`Scheduler.beginWakeBatch`, ManagerThread+WorkerWakes.swift).
    func fire(at now: UInt64) {
        let firings = timers.due(at: now)
        if firings.isEmpty { return }
        trace?.record(.timerWindow, arg: UInt32(truncatingIfNeeded: firings.count))
        for firing in firings {
            guard let fire = timers.settle(firing) else { continue }
            switch fire.target {
            case .action(let action):
                action()
            case .target(let target):
                target.reached()
            case .source(let source):
                // A repeating timer stays armed under a new generation; a one-shot is gone.
                source.registration.timer = fire.current
                trace?.record(.sourceEvent, aux: TraceSourceKind.timer.rawValue, subject: UInt64(fire.count))
                source.timerFired(count: fire.count, due: fire.deadline > now ? fire.deadline : nil)
            }
        }
    }

    /// How long before its deadline a `.strict` timer's fire goes to a worker, which
    /// sleeps out the rest (`DispatchSource.waitForStagedDeadline`): longer than the
    /// manager's wake-up and the hand-off to a worker usually take on a board, short
    /// enough that the worker it keeps waiting is little held.
    static let strictTimerAdvance: UInt64 = 300_000

    /// Applies a timer source's current schedule (replacing the armed one). With
    /// `onlyIfChanged` (a `.reschedule` request), only a schedule not applied yet: the
    /// registration may have armed the newest one already, and that timer may have fired.
    func reschedule(_ source: DispatchSource, onlyIfChanged: Bool = false) {
        guard source.registration.registered, !source.registration.removing else { return }
        let (current, changed) = source.lock.withLock { () -> (TimerSpec?, Bool) in
            defer { source.timerSpecUnapplied = false }
            return (source.timerSpec, source.timerSpecUnapplied)
        }
        if onlyIfChanged && !changed { return }
        if let old = source.registration.timer {
            disarmTimer(old)
            source.registration.timer = nil
        }
        if let kept = source.registration.timerBand {
            kept.disarm(source)
            source.registration.timerBand = nil
        }
        guard let spec = current, let deadline = spec.deadline else { return }
        let priority = QoSPriority(packed: source.eventPriority.load(ordering: .relaxed))
        let level = priority.level
        let now = spec.wall ? UInt64(max(WallClock.nanoseconds, 0)) : MonotonicClock.nanoseconds
        let period = spec.interval > 0 ? spec.interval : (deadline > now ? deadline - now : 0)
        let leeway = leewayPolicy.leeway(requested: spec.leeway, period: period, level: level, strict: spec.strict)
        // A strict timer whose window is narrower than a hand-off is staged (TimerQueue).
        let advance = spec.strict && leeway < Self.strictTimerAdvance ? Self.strictTimerAdvance : 0
        // Kept by the band whose workers run its handler, unless staged or on the wall
        // clock (whose changes the manager follows).
        if advance == 0, !spec.wall, let kept = scheduler.keptTimers(forIndex: RunQueueIndex.of(priority)) {
            source.registration.timerBand = kept
            if kept.arm(source, deadline: deadline, leeway: leeway, interval: spec.interval) {
                scheduler.bandAimMovedEarlier(kept.band)
            }
            return
        }
        source.registration.timer = armTimer(deadline: deadline, wall: spec.wall, interval: spec.interval,
                                             leeway: leeway, advance: advance, owner: .source(source))
    }
}
