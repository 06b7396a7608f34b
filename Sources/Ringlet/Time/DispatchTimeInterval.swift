// DispatchTimeInterval and DispatchTimeoutResult: the offsets added to deadlines and the
// outcome of a timed wait. Source-compatible with the Dispatch module on Linux
// (swift-corelibs-libdispatch, src/swift/Time.swift); differences are noted below.

/// A time interval that can be used as an offset from a `DispatchTime` or a
/// `DispatchWallTime`.
///
///     let inOneSecond = DispatchTime.now() + DispatchTimeInterval.seconds(1)
///
/// Each case is converted to a count of nanoseconds held in an `Int64`. A count that
/// does not fit saturates at `Int64.max` (or `Int64.min`), and adding such an interval
/// to a time yields `distantFuture`, as in Dispatch. Intervals that saturate to the same
/// count compare equal: `.seconds(Int.max) == .milliseconds(Int.max)` is `true`.
///
/// `.never` is equal only to itself; added to a time it yields `distantFuture`.
/// No conversion or comparison traps.
public enum DispatchTimeInterval: Equatable, Sendable {
    /// A number of seconds (1_000_000_000 nanoseconds each).
    case seconds(Int)
    /// A number of milliseconds (1_000_000 nanoseconds each).
    case milliseconds(Int)
    /// A number of microseconds (1_000 nanoseconds each).
    case microseconds(Int)
    /// A number of nanoseconds.
    case nanoseconds(Int)
    /// An infinite interval: a deadline this far away is never reached.
    case never

    /// Returns whether two intervals denote the same number of nanoseconds after
    /// saturation, or are both `.never`. O(1); never traps.
    public static func == (lhs: DispatchTimeInterval, rhs: DispatchTimeInterval) -> Bool {
        switch (lhs, rhs) {
        case (.never, .never): return true
        case (.never, _), (_, .never): return false
        default: return lhs.offsetNanoseconds == rhs.offsetNanoseconds
        }
    }
}

extension DispatchTimeInterval {
    /// The offset in nanoseconds that Dispatch's `dispatch_time(3)` would be given for
    /// this interval: the count saturated to `Int64`, and `Int64.max` for `.never`.
    /// Invoked by the time operators; `nanoseconds` (Deadline.swift) is the scheduler's view.
    var offsetNanoseconds: Int64 {
        switch self {
        case .seconds(let count): return Self.saturatingProduct(count, 1_000_000_000)
        case .milliseconds(let count): return Self.saturatingProduct(count, 1_000_000)
        case .microseconds(let count): return Self.saturatingProduct(count, 1_000)
        case .nanoseconds(let count): return Int64(count)
        case .never: return Int64.max
        }
    }

    /// `count * unit` clamped to `Int64.min...Int64.max`. `unit` must be positive.
    /// `Int64(count)` cannot fail: `Int` is at most 64 bits wide on every target we build.
    private static func saturatingProduct(_ count: Int, _ unit: Int64) -> Int64 {
        let (product, overflow) = Int64(count).multipliedReportingOverflow(by: unit)
        if overflow { return count > 0 ? Int64.max : Int64.min }
        return product
    }

    /// `-offset`, saturating: Dispatch computes `-interval.rawValue` here and traps for
    /// `Int64.min` (e.g. `.nanoseconds(Int.min)`); we answer `Int64.max` instead.
    static func negatedSaturating(_ offset: Int64) -> Int64 {
        offset == Int64.min ? Int64.max : -offset
    }

    /// Converts seconds to nanoseconds the way Dispatch's `toInt64Clamped` does:
    /// NaN becomes `Int64.max` (so both `t + .nan` and `t - .nan` are `distantFuture`),
    /// values outside `Int64` clamp to its bounds, the rest truncate toward zero.
    static func nanosecondsClamped(seconds: Double) -> Int64 {
        let nanoseconds = seconds * 1_000_000_000
        if nanoseconds.isNaN { return Int64.max }
        // Double(Int64.max) rounds up to 2^63, so `>=` catches every unrepresentable value.
        if nanoseconds >= Double(Int64.max) { return Int64.max }
        if nanoseconds <= Double(Int64.min) { return Int64.min }
        return Int64(nanoseconds)
    }
}

/// The result of a wait with a timeout (`DispatchSemaphore.wait(timeout:)`,
/// `DispatchGroup.wait(timeout:)`, `DispatchWorkItem.wait(timeout:)`).
public enum DispatchTimeoutResult: Sendable {
    /// The awaited event happened before the deadline.
    case success
    /// The deadline passed first.
    case timedOut
}
