import CRinglet
import Synchronization

/// CLOCK_REALTIME in nanoseconds since 1970: what `DispatchWallTime` counts. In
/// debug builds tests can move it (`testOffset`) to show that wall-clock timers
/// follow a change of the clock without the privilege to set the real one.
enum WallClock {
    @inline(__always)
    static var nanoseconds: Int64 {
        #if DEBUG
        return rl_clock_realtime_ns() &+ testOffset.load(ordering: .relaxed)
        #else
        return rl_clock_realtime_ns()
        #endif
    }

    #if DEBUG
    static let testOffset = Atomic<Int64>(0)
    #endif
}
