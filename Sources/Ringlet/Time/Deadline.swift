// Deadline: how the scheduler turns a DispatchTime, DispatchWallTime or
// DispatchTimeInterval into the relative timeout its waits take (FutexEvent.wait's
// `timeout_ns`: negative means "forever"). Each conversion has a variant taking the
// current clock reading, so tests and the timer structure can run on virtual time.


extension DispatchTime {
    /// Nanoseconds from now (CLOCK_MONOTONIC) until this deadline: -1 for
    /// `distantFuture` (wait forever), 0 when it has passed or is "now" (raw value 0).
    /// Costs one clock read.
    var relativeNanoseconds: Int64 {
        relativeNanoseconds(fromUptime: MonotonicClock.nanoseconds)
    }

    /// Nanoseconds from the uptime `now` until this deadline: -1 for `distantFuture`
    /// (and every raw value Dispatch treats as forever), else max(0, deadline - now).
    func relativeNanoseconds(fromUptime now: UInt64) -> Int64 {
        if rawValue > DispatchTime.maximumUptime { return -1 }
        if rawValue <= now { return 0 }
        // rawValue <= 2^62 - 1, so the difference fits an Int64.
        return Int64(rawValue - now)
    }
}

extension DispatchWallTime {
    /// Nanoseconds from now (CLOCK_REALTIME) until this deadline: -1 for
    /// `distantFuture` (wait forever), 0 when it has passed. Costs one clock read.
    ///
    /// The wait that uses it still runs on the monotonic clock, so a deadline does not
    /// move if the wall clock is set while a thread already sleeps (as in libdispatch).
    var relativeNanoseconds: Int64 {
        relativeNanoseconds(fromEpoch: WallClock.nanoseconds)
    }

    /// Nanoseconds from `now` (nanoseconds since 1970) until this deadline: -1 for
    /// `distantFuture`, else max(0, deadline - now), saturating at `Int64.max`.
    func relativeNanoseconds(fromEpoch now: Int64) -> Int64 {
        guard let deadline = nanosecondsSinceEpoch else { return -1 }
        let (difference, overflow) = deadline.subtractingReportingOverflow(now)
        // deadline >= 2, so overflow means `now` is hugely negative: far in the future.
        if overflow { return Int64.max }
        return max(0, difference)
    }
}

extension DispatchTimeInterval {
    /// The interval in nanoseconds, saturated to `Int64` (negative counts stay
    /// negative), or nil for `.never`. O(1); never traps.
    var nanoseconds: Int64? {
        if case .never = self { return nil }
        return offsetNanoseconds
    }
}
