import CRinglet
import Synchronization

/// CLOCK_REALTIME in nanoseconds since 1970: what `DispatchWallTime` counts. In
/// debug builds tests can move it (`offsetHook` answers by how much) to show that
/// wall-clock timers follow a change of the clock without the privilege to set the
/// real one.
enum WallClock {
    @inline(__always)
    static var nanoseconds: Int64 {
        #if DEBUG
        return rl_clock_realtime_ns() &+ (offsetHook.call(()) ?? 0)
        #else
        return rl_clock_realtime_ns()
        #endif
    }

    #if DEBUG
    static let offsetHook = TestHook<Void, Int64>()
    #endif
}
