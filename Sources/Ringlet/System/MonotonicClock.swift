import CRinglet

/// CLOCK_MONOTONIC, the clock `DispatchTime` counts. One vDSO call, no syscall.
enum MonotonicClock {
    @inline(__always)
    static var nanoseconds: UInt64 { rl_clock_monotonic_ns() }
}
