import CRinglet

/// CLOCK_MONOTONIC, the clock `DispatchTime` counts. One vDSO call, no syscall.
enum MonotonicClock {
    @inline(__always)
    static var nanoseconds: UInt64 { rl_clock_monotonic_ns() }

    /// Sleeps until the clock reaches `deadline` (returns at once when it has), with
    /// no timer slack: the kernel ends the sleep as close to `deadline` as it can. For
    /// short, precise waits only (a staged strict timer, DispatchSource+Timer.swift).
    static func sleep(until deadline: UInt64) {
        // Never returns early: a refused sleep (it has no reason to be) spins instead.
        while nanoseconds < deadline {
            if rl_sleep_until_monotonic_ns(deadline) != 0 { ThreadControl.spinHint() }
        }
    }
}
