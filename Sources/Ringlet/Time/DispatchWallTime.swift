// DispatchWallTime: a deadline on CLOCK_REALTIME (calendar time, follows clock changes).
//
// Encoding: the same as libdispatch's `dispatch_walltime()` on Linux, so `rawValue`s
// agree with Dispatch. For an instant `n` nanoseconds after 1970,
//
//   rawValue = UInt64(bitPattern: -n)      2 <= n < 2^62 - 1 (bits 63 and 62 end up set)
//   rawValue = UInt64.max  (that is, -1)   distantFuture, and any n >= 2^62 - 1
//
// so later instants have smaller raw values, and comparison must decode first.
// Instants before 1970 + 2 ns are clamped to 2 ns: libdispatch does the same on
// underflow (src/time.c), because -1 would read as distantFuture. Unlike libdispatch,
// now() on a clock reading <= 1 ns (a board without RTC, at boot) gives 2 ns, not
// distantFuture: a deadline computed at boot must not turn into "wait forever".


/// A point in calendar (wall-clock) time with nanosecond resolution: a deadline that
/// moves with the system clock when it is set, as for `asyncAfter(wallDeadline:)`.
///
/// Values are plain integers: creating, comparing and offsetting them costs a few
/// instructions and never traps; only `now()` reads the clock.
public struct DispatchWallTime: Comparable, Hashable, Sendable {
    /// The encoded time: the negated count of nanoseconds since 1970, or `UInt64.max`
    /// for `distantFuture` (libdispatch's `dispatch_time_t` for the wall clock).
    public let rawValue: UInt64

    // `init(timespec:)` is omitted: `timespec` comes from Glibc, which Ringlet cannot import.

    /// Wraps an encoded value as is.
    init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Encodes an instant `nanoseconds` after 1970, clamping as described above.
    init(nanosecondsSinceEpoch nanoseconds: Int64) {
        if nanoseconds >= Int64(DispatchTime.maximumUptime) {
            self = .distantFuture
        } else {
            self.init(rawValue: UInt64(bitPattern: -max(nanoseconds, 2)))
        }
    }

    /// Nanoseconds since 1970, or nil for `distantFuture`.
    var nanosecondsSinceEpoch: Int64? {
        if rawValue == UInt64.max { return nil }
        // `0 &-` rather than `-`: a raw value no initialiser produces must not trap.
        return 0 &- Int64(bitPattern: rawValue)
    }

    /// Reads CLOCK_REALTIME. Costs one `clock_gettime(2)` (a vDSO call, no syscall on
    /// most boards). Never traps.
    public static func now() -> DispatchWallTime {
        DispatchWallTime(nanosecondsSinceEpoch: WallClock.nanoseconds)
    }

    /// A time later than every other: a deadline that is never reached.
    /// Absorbs all arithmetic: `distantFuture + x` and `distantFuture - x` are `distantFuture`.
    public static let distantFuture = DispatchWallTime(rawValue: UInt64.max)

    /// This time moved by `offset` nanoseconds, saturating at `distantFuture` and at
    /// 2 ns after 1970 like libdispatch's dispatch_time(). Invoked by the operators.
    func advanced(byNanoseconds offset: Int64) -> DispatchWallTime {
        guard let base = nanosecondsSinceEpoch else { return .distantFuture }
        let (sum, overflow) = base.addingReportingOverflow(offset)
        if overflow { return offset > 0 ? .distantFuture : DispatchWallTime(nanosecondsSinceEpoch: 2) }
        return DispatchWallTime(nanosecondsSinceEpoch: sum)
    }
}

extension DispatchWallTime {
    /// Returns whether `a` is earlier than `b`; `distantFuture` is later than every
    /// other time. O(1).
    public static func < (a: DispatchWallTime, b: DispatchWallTime) -> Bool {
        guard let bNanoseconds = b.nanosecondsSinceEpoch else { return a != .distantFuture }
        guard let aNanoseconds = a.nanosecondsSinceEpoch else { return false }
        return aNanoseconds < bNanoseconds
    }

    /// Returns whether `a` and `b` have the same raw value. O(1).
    public static func == (a: DispatchWallTime, b: DispatchWallTime) -> Bool {
        a.rawValue == b.rawValue
    }
}

/// Returns `time` moved later by `interval`; `distantFuture` if the result is not
/// representable or `interval` is `.never`. O(1); never traps.
public func + (time: DispatchWallTime, interval: DispatchTimeInterval) -> DispatchWallTime {
    time.advanced(byNanoseconds: interval.offsetNanoseconds)
}

/// Returns `time` moved earlier by `interval`, never before 2 ns after 1970.
/// `distantFuture` stays `distantFuture`. Unlike Dispatch, an interval of `Int64.min`
/// nanoseconds does not trap: its negation saturates. O(1).
public func - (time: DispatchWallTime, interval: DispatchTimeInterval) -> DispatchWallTime {
    time.advanced(byNanoseconds: DispatchTimeInterval.negatedSaturating(interval.offsetNanoseconds))
}

/// Returns `time` moved by `seconds` (fractional, truncated to whole nanoseconds);
/// infinite or NaN `seconds` give `distantFuture`, as in Dispatch. O(1); never traps.
public func + (time: DispatchWallTime, seconds: Double) -> DispatchWallTime {
    time.advanced(byNanoseconds: DispatchTimeInterval.nanosecondsClamped(seconds: seconds))
}

/// Returns `time` moved earlier by `seconds`, never before 2 ns after 1970; NaN
/// `seconds` give `distantFuture`, as in Dispatch. O(1); never traps.
public func - (time: DispatchWallTime, seconds: Double) -> DispatchWallTime {
    time.advanced(byNanoseconds: DispatchTimeInterval.nanosecondsClamped(seconds: -seconds))
}
