// Unit tests for DispatchTime, DispatchWallTime, DispatchTimeInterval and the deadline
// conversions the scheduler uses. No kernel dependence beyond reading the clocks.

import CRinglet
import Testing
@testable import Ringlet

/// 2^62 - 1 (DISPATCH_TIME_MAX_VALUE): results at or above it, and inputs above it, are "forever".
private let foreverThreshold: UInt64 = (1 << 62) - 1
private let second: UInt64 = 1_000_000_000

@Suite("DispatchTime")
struct DispatchTimeTests {
    @Test func uptimeRoundTripsAndIsTheRawValue() {
        let time = DispatchTime(uptimeNanoseconds: 123_456_789)
        #expect(time.uptimeNanoseconds == 123_456_789)
        #expect(time.rawValue == 123_456_789)
        #expect(DispatchTime.distantFuture.rawValue == UInt64.max)
        #expect(DispatchTime.distantFuture.uptimeNanoseconds == UInt64.max)
        #expect(DispatchTime(uptimeNanoseconds: UInt64.max) == .distantFuture)
    }

    @Test func nowReadsTheMonotonicClock() {
        let before = rl_clock_monotonic_ns()
        let now = DispatchTime.now()
        let after = rl_clock_monotonic_ns()
        #expect(before <= now.uptimeNanoseconds && now.uptimeNanoseconds <= after)
        #expect(now <= DispatchTime.now())
    }

    @Test(arguments: [
        (DispatchTimeInterval.seconds(2), UInt64(2_000_000_000)),
        (.milliseconds(3), 3_000_000),
        (.microseconds(4), 4_000),
        (.nanoseconds(5), 5),
        (.seconds(0), 0),
    ])
    func addsAndSubtractsIntervals(interval: DispatchTimeInterval, nanoseconds: UInt64) {
        let base = DispatchTime(uptimeNanoseconds: 10 * second)
        #expect((base + interval).uptimeNanoseconds == 10 * second + nanoseconds)
        #expect((base - interval).uptimeNanoseconds == 10 * second - nanoseconds)
    }

    @Test func negativeIntervalsMoveTheOtherWay() {
        let base = DispatchTime(uptimeNanoseconds: 10 * second)
        #expect((base + .seconds(-3)).uptimeNanoseconds == 7 * second)
        #expect((base - .milliseconds(-500)).uptimeNanoseconds == 10 * second + 500_000_000)
    }

    @Test func addsAndSubtractsFractionalSeconds() {
        let base = DispatchTime(uptimeNanoseconds: 10 * second)
        #expect((base + 1.5).uptimeNanoseconds == 11 * second + 500_000_000)
        #expect((base - 0.25).uptimeNanoseconds == 9 * second + 750_000_000)
        #expect((base + -2.0).uptimeNanoseconds == 8 * second)
        #expect((base + 0.000_000_001).uptimeNanoseconds == 10 * second + 1)
    }

    @Test func saturatesAtDistantFuture() {
        let base = DispatchTime(uptimeNanoseconds: 10 * second)
        #expect(base + .never == .distantFuture)
        #expect(base + .seconds(Int.max) == .distantFuture)
        #expect(base + .nanoseconds(Int.max) == .distantFuture)
        #expect(base + Double.infinity == .distantFuture)
        #expect(base + 1e300 == .distantFuture)
        #expect(base + Double.nan == .distantFuture)
        #expect(base - Double.nan == .distantFuture)
        // The last representable nanosecond, then the first one that is not.
        let edge = Int(foreverThreshold - 1 - 10 * second)
        #expect((base + .nanoseconds(edge)).uptimeNanoseconds == foreverThreshold - 1)
        #expect(base + .nanoseconds(edge + 1) == .distantFuture)
    }

    @Test func distantFutureAbsorbsEveryOffset() {
        let forever = DispatchTime.distantFuture
        #expect(forever + .seconds(1) == forever)
        #expect(forever - .seconds(1) == forever)
        #expect(forever - .never == forever)
        #expect(forever - 1e9 == forever)
        #expect(forever + -1e9 == forever)
        // Raw values Dispatch cannot represent act as forever too; the threshold itself does not.
        #expect(DispatchTime(uptimeNanoseconds: foreverThreshold + 1) - .seconds(1) == forever)
        #expect((DispatchTime(uptimeNanoseconds: foreverThreshold) - .nanoseconds(1)).uptimeNanoseconds == foreverThreshold - 1)
        #expect(DispatchTime(uptimeNanoseconds: foreverThreshold) + .nanoseconds(0) == forever)
    }

    @Test func subtractionStopsAtOneNanosecond() {
        let base = DispatchTime(uptimeNanoseconds: 10)
        #expect((base - .seconds(1)).uptimeNanoseconds == 1)
        #expect((base - .nanoseconds(10)).uptimeNanoseconds == 1)
        #expect((base - .nanoseconds(9)).uptimeNanoseconds == 1)
        #expect((base - .nanoseconds(8)).uptimeNanoseconds == 2)
        #expect((base - Double.infinity).uptimeNanoseconds == 1)
        #expect((base + .seconds(Int.min)).uptimeNanoseconds == 1)
        #expect((base - .never).uptimeNanoseconds == 1)
    }

    @Test func extremeIntervalsDoNotTrap() {
        let base = DispatchTime(uptimeNanoseconds: 10 * second)
        // Dispatch traps negating Int64.min here; Ringlet saturates.
        #expect(base - .nanoseconds(Int.min) == .distantFuture)
        #expect(base - .seconds(Int.min) == .distantFuture)
        #expect((base + .nanoseconds(Int.min)).uptimeNanoseconds == 1)
        #expect((base - .microseconds(Int.max)).uptimeNanoseconds == 1)
    }

    @Test func zeroMeansNowWhenOffset() {
        let before = rl_clock_monotonic_ns()
        let later = DispatchTime(uptimeNanoseconds: 0) + .seconds(1)
        let after = rl_clock_monotonic_ns()
        #expect(before + second <= later.uptimeNanoseconds)
        #expect(later.uptimeNanoseconds <= after + second)
    }

    @Test func comparesByRawValue() {
        let a = DispatchTime(uptimeNanoseconds: 5)
        let b = DispatchTime(uptimeNanoseconds: 6)
        #expect(a < b && !(b < a) && !(a < a))
        #expect(a != b && a == DispatchTime(uptimeNanoseconds: 5))
        #expect(b < .distantFuture && !(DispatchTime.distantFuture < .distantFuture))
        #expect(DispatchTime.now() < .distantFuture)
        #expect(Set([a, b, DispatchTime(uptimeNanoseconds: 5)]).count == 2)
    }

    @Test func relativeNanosecondsOnVirtualTime() {
        let now: UInt64 = 100 * second
        #expect(DispatchTime.distantFuture.relativeNanoseconds(fromUptime: now) == -1)
        #expect(DispatchTime(uptimeNanoseconds: foreverThreshold + 1).relativeNanoseconds(fromUptime: now) == -1)
        #expect(DispatchTime(uptimeNanoseconds: now + 7).relativeNanoseconds(fromUptime: now) == 7)
        #expect(DispatchTime(uptimeNanoseconds: now).relativeNanoseconds(fromUptime: now) == 0)
        #expect(DispatchTime(uptimeNanoseconds: 1).relativeNanoseconds(fromUptime: now) == 0)
        #expect(DispatchTime(uptimeNanoseconds: 0).relativeNanoseconds(fromUptime: now) == 0)
        let last = DispatchTime(uptimeNanoseconds: foreverThreshold)
        #expect(last.relativeNanoseconds(fromUptime: 0) == Int64(foreverThreshold))
    }

    @Test func relativeNanosecondsOnTheRealClock() {
        let remaining = (DispatchTime.now() + .seconds(1)).relativeNanoseconds
        #expect(remaining > 0 && remaining <= Int64(second))
        #expect((DispatchTime.now() - .seconds(1)).relativeNanoseconds == 0)
        #expect(DispatchTime.distantFuture.relativeNanoseconds == -1)
    }
}

@Suite("DispatchWallTime")
struct DispatchWallTimeTests {
    private static let instant: Int64 = 1_700_000_000 * 1_000_000_000  // November 2023
    private let base = DispatchWallTime(nanosecondsSinceEpoch: Self.instant)

    @Test func encodesAsNegatedNanosecondsLikeDispatch() {
        // Typed operands: #expect compares an Optional with an untyped literal product as Int.
        #expect(Int64(bitPattern: base.rawValue) == -Self.instant)
        #expect(base.nanosecondsSinceEpoch == Self.instant)
        #expect(DispatchWallTime.distantFuture.rawValue == UInt64.max)
        #expect(DispatchWallTime.distantFuture.nanosecondsSinceEpoch == nil)
        #expect(DispatchWallTime(nanosecondsSinceEpoch: Int64(foreverThreshold)) == .distantFuture)
    }

    @Test func nowReadsTheRealtimeClock() throws {
        let before = rl_clock_realtime_ns()
        let now = try #require(DispatchWallTime.now().nanosecondsSinceEpoch)
        let after = rl_clock_realtime_ns()
        #expect(before <= now && now <= after)
        #expect(DispatchWallTime.now() < .distantFuture)
    }

    @Test func arithmetic() {
        let s = Int64(second)
        #expect((base + .seconds(2)).nanosecondsSinceEpoch == base.nanosecondsSinceEpoch! + 2 * s)
        #expect((base - .milliseconds(3)).nanosecondsSinceEpoch == base.nanosecondsSinceEpoch! - 3_000_000)
        #expect((base + 1.5).nanosecondsSinceEpoch == base.nanosecondsSinceEpoch! + 3 * s / 2)
        #expect((base - 0.5).nanosecondsSinceEpoch == base.nanosecondsSinceEpoch! - s / 2)
    }

    @Test func saturates() {
        #expect(base + .never == .distantFuture)
        #expect(base + .seconds(Int.max) == .distantFuture)
        #expect(base + Double.infinity == .distantFuture)
        #expect(base - Double.nan == .distantFuture)
        #expect(base - .nanoseconds(Int.min) == .distantFuture)
        #expect(DispatchWallTime.distantFuture - .seconds(1) == .distantFuture)
        #expect(DispatchWallTime.distantFuture + -1.0 == .distantFuture)
        // Below the epoch: clamped to 2 ns, never to -1 (which would read as forever).
        #expect((base - .seconds(Int.max)).nanosecondsSinceEpoch == 2)
        #expect((base + .nanoseconds(Int.min)).nanosecondsSinceEpoch == 2)
        #expect(DispatchWallTime(nanosecondsSinceEpoch: 1).nanosecondsSinceEpoch == 2)
        #expect(DispatchWallTime(nanosecondsSinceEpoch: -5).nanosecondsSinceEpoch == 2)
    }

    @Test func comparesByInstantNotByRawValue() {
        let later = base + .nanoseconds(1)
        #expect(base < later && !(later < base) && !(base < base))
        #expect(later.rawValue < base.rawValue)  // the encoding runs backwards
        #expect(later < .distantFuture && !(DispatchWallTime.distantFuture < later))
        #expect(!(DispatchWallTime.distantFuture < .distantFuture))
        #expect(base == DispatchWallTime(nanosecondsSinceEpoch: base.nanosecondsSinceEpoch!))
        #expect(Set([base, later, base]).count == 2)
    }

    @Test func relativeNanoseconds() {
        let now = base.nanosecondsSinceEpoch!
        #expect(DispatchWallTime.distantFuture.relativeNanoseconds(fromEpoch: now) == -1)
        #expect((base + .nanoseconds(42)).relativeNanoseconds(fromEpoch: now) == 42)
        #expect(base.relativeNanoseconds(fromEpoch: now) == 0)
        #expect((base - .seconds(1)).relativeNanoseconds(fromEpoch: now) == 0)
        #expect(base.relativeNanoseconds(fromEpoch: Int64.min) == Int64.max)
        let remaining = (DispatchWallTime.now() + .seconds(1)).relativeNanoseconds
        #expect(remaining > 0 && remaining <= Int64(second))
        #expect(DispatchWallTime.distantFuture.relativeNanoseconds == -1)
    }
}

@Suite("DispatchTimeInterval")
struct DispatchTimeIntervalTests {
    @Test func equalityComparesNanoseconds() {
        #expect(DispatchTimeInterval.seconds(1) == .milliseconds(1_000))
        #expect(DispatchTimeInterval.milliseconds(1) == .microseconds(1_000))
        #expect(DispatchTimeInterval.microseconds(1) == .nanoseconds(1_000))
        #expect(DispatchTimeInterval.seconds(1) != .seconds(2))
        #expect(DispatchTimeInterval.seconds(-1) == .nanoseconds(-1_000_000_000))
    }

    @Test func saturatedIntervalsCompareEqualButNeverIsApart() {
        #expect(DispatchTimeInterval.seconds(Int.max) == .milliseconds(Int.max))
        #expect(DispatchTimeInterval.microseconds(Int.max) == .nanoseconds(Int.max))
        #expect(DispatchTimeInterval.seconds(Int.min) == .nanoseconds(Int.min))
        #expect(DispatchTimeInterval.never == .never)
        #expect(DispatchTimeInterval.never != .nanoseconds(Int.max))
        #expect(DispatchTimeInterval.seconds(Int.max) != .never)
    }

    @Test func nanosecondsForTheScheduler() {
        #expect(DispatchTimeInterval.never.nanoseconds == nil)
        #expect(DispatchTimeInterval.seconds(3).nanoseconds == 3_000_000_000)
        #expect(DispatchTimeInterval.milliseconds(3).nanoseconds == 3_000_000)
        #expect(DispatchTimeInterval.microseconds(3).nanoseconds == 3_000)
        #expect(DispatchTimeInterval.nanoseconds(3).nanoseconds == 3)
        #expect(DispatchTimeInterval.milliseconds(-2).nanoseconds == -2_000_000)
        #expect(DispatchTimeInterval.seconds(Int.max).nanoseconds == Int64.max)
        #expect(DispatchTimeInterval.microseconds(Int.min).nanoseconds == Int64.min)
        // 9_223_372_036 s fits in Int64 nanoseconds, one more second does not.
        #expect(DispatchTimeInterval.seconds(9_223_372_036).nanoseconds == 9_223_372_036_000_000_000)
        #expect(DispatchTimeInterval.seconds(9_223_372_037).nanoseconds == Int64.max)
    }

    @Test func timeoutResultCases() {
        let results: [DispatchTimeoutResult] = [.success, .timedOut]
        #expect(results[0] == .success && results[1] == .timedOut && results[0] != results[1])
    }
}
