// DispatchTime: a deadline on CLOCK_MONOTONIC, encoded exactly like libdispatch's
// `dispatch_time_t` for its uptime clock on Linux, so `rawValue`s agree with Dispatch:
//
//   rawValue 0                    "now" (DISPATCH_TIME_NOW): resolved when used
//   rawValue 1 ... 2^62 - 1       nanoseconds of CLOCK_MONOTONIC (clock_gettime(2))
//   rawValue > 2^62 - 1           distantFuture; only UInt64.max (DISPATCH_TIME_FOREVER)
//                                 is produced, larger inputs are kept but act as forever
//
// Results of arithmetic stop one below: 2^62 - 1 itself is accepted as an input but
// never produced (libdispatch, src/shims/time.h: DISPATCH_TIME_MAX_VALUE).
//
// Arithmetic follows libdispatch's dispatch_time() (src/time.c): adding past the
// largest representable value saturates to distantFuture, subtracting below zero gives
// 1 ns (0 would mean "now"), and distantFuture absorbs every offset.


/// A point in time on the system's monotonic clock (uptime, stopped while suspended),
/// with nanosecond resolution. Used for deadlines such as `asyncAfter(deadline:)`.
///
/// Values are plain integers: creating, comparing and offsetting them costs a few
/// instructions and never traps; only `now()` reads the clock.
public struct DispatchTime: Comparable, Hashable, Sendable {
    /// The encoded time: CLOCK_MONOTONIC nanoseconds, `0` for "now" and `UInt64.max`
    /// for `distantFuture` (libdispatch's `dispatch_time_t` for the uptime clock).
    public let rawValue: UInt64

    /// libdispatch's `DISPATCH_TIME_MAX_VALUE` (2^62 - 1; the bits above are its clock
    /// tags): inputs above it and results at or above it are "forever".
    static let maximumUptime: UInt64 = (1 << 62) - 1

    /// Wraps an encoded value as is.
    init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Reads CLOCK_MONOTONIC. Costs one `clock_gettime(2)` (a vDSO call, no syscall on
    /// most boards). Never traps.
    public static func now() -> DispatchTime {
        let uptime = MonotonicClock.nanoseconds
        return uptime >= maximumUptime ? .distantFuture : DispatchTime(rawValue: uptime)
    }

    /// A time later than every other: a deadline that is never reached.
    /// Absorbs all arithmetic: `distantFuture + x` and `distantFuture - x` are `distantFuture`.
    public static let distantFuture = DispatchTime(rawValue: UInt64.max)

    /// Creates a time `uptimeNanoseconds` after boot on CLOCK_MONOTONIC, stored as is.
    ///
    /// As in Dispatch, `DispatchTime(uptimeNanoseconds: 0)` means "now", not the instant
    /// of boot: used as a deadline it has already passed, and offsets are applied to the
    /// current time. Values above 2^62 - 1 act as `distantFuture`. O(1); never traps.
    public init(uptimeNanoseconds: UInt64) {
        self.rawValue = uptimeNanoseconds
    }

    /// The number of nanoseconds since boot that this time denotes (`UInt64.max` for
    /// `distantFuture`, 0 for a time made with `init(uptimeNanoseconds: 0)`). O(1).
    public var uptimeNanoseconds: UInt64 {
        rawValue
    }

    /// This time moved by `offset` nanoseconds, following libdispatch's dispatch_time():
    /// saturates at `distantFuture` and at 1 ns; a base of 0 is first replaced by now().
    /// Invoked by the `+`/`-` operators. Never traps.
    func advanced(byNanoseconds offset: Int64) -> DispatchTime {
        if rawValue > Self.maximumUptime { return .distantFuture }
        let base = rawValue == 0 ? MonotonicClock.nanoseconds : rawValue
        if base > Self.maximumUptime { return .distantFuture }
        if offset >= 0 {
            // base < 2^62 and offset < 2^63: the sum cannot wrap a UInt64.
            let sum = base + UInt64(offset)
            return sum >= Self.maximumUptime ? .distantFuture : DispatchTime(rawValue: sum)
        }
        let magnitude = offset.magnitude
        return magnitude >= base ? DispatchTime(rawValue: 1) : DispatchTime(rawValue: base - magnitude)
    }
}

extension DispatchTime {
    /// Returns whether `a` is earlier than `b`, comparing raw values: `distantFuture` is
    /// later than every other time. O(1).
    public static func < (a: DispatchTime, b: DispatchTime) -> Bool {
        a.rawValue < b.rawValue
    }

    /// Returns whether `a` and `b` have the same raw value. O(1).
    public static func == (a: DispatchTime, b: DispatchTime) -> Bool {
        a.rawValue == b.rawValue
    }
}

/// Returns `time` moved later by `interval`; `distantFuture` if the result is not
/// representable or `interval` is `.never`. O(1); never traps.
public func + (time: DispatchTime, interval: DispatchTimeInterval) -> DispatchTime {
    time.advanced(byNanoseconds: interval.offsetNanoseconds)
}

/// Returns `time` moved earlier by `interval`, never before 1 ns after boot.
/// `distantFuture` stays `distantFuture`. Unlike Dispatch, an interval of `Int64.min`
/// nanoseconds does not trap: its negation saturates. O(1).
public func - (time: DispatchTime, interval: DispatchTimeInterval) -> DispatchTime {
    time.advanced(byNanoseconds: DispatchTimeInterval.negatedSaturating(interval.offsetNanoseconds))
}

/// Returns `time` moved by `seconds` (fractional, truncated to whole nanoseconds);
/// infinite or NaN `seconds` give `distantFuture`, as in Dispatch. O(1); never traps.
public func + (time: DispatchTime, seconds: Double) -> DispatchTime {
    time.advanced(byNanoseconds: DispatchTimeInterval.nanosecondsClamped(seconds: seconds))
}

/// Returns `time` moved earlier by `seconds`, never before 1 ns after boot; NaN
/// `seconds` give `distantFuture`, as in Dispatch. O(1); never traps.
public func - (time: DispatchTime, seconds: Double) -> DispatchTime {
    time.advanced(byNanoseconds: DispatchTimeInterval.nanosecondsClamped(seconds: -seconds))
}
