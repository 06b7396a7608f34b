// What the Swift concurrency rows of `ringlet bench` share between the two sides: a
// result handed from a task to the thread that waits for it, and the context switches
// and CPU time of every thread of the process around a piece of work. Imports neither
// Dispatch nor Ringlet.
import Glibc

/// A value a task stores and the waiting thread reads after the task signalled (the
/// side's semaphore orders the two).
package final class BenchBox<Value>: @unchecked Sendable {
    package var value: Value
    package init(_ value: Value) { self.value = value }
}

/// Context switches (voluntary + nonvoluntary, `benchSwitchesBetween`) of every thread
/// of the process — the calling one too — and the process's CPU time while `body` runs.
package func benchMeasureEveryThread(_ body: () -> Void) -> [(String, Double)] {
    let switchesBefore = benchThreadSwitches(excluding: -1)
    let cpuBefore = benchProcessCPUTime()
    let start = benchNow()
    body()
    let elapsed = benchNow() - start
    let cpuAfter = benchProcessCPUTime()
    let switchesAfter = benchThreadSwitches(excluding: -1)
    let cpu = (cpuAfter.user - cpuBefore.user) + (cpuAfter.system - cpuBefore.system)
    return benchSwitchesBetween(switchesBefore, switchesAfter)
        + [("cpu_ns", Double(cpu)), ("window_ns", Double(elapsed))]
}

/// Whether the calling thread is the process's main thread (its id is the process id).
package func benchOnMainThread() -> Bool { benchCurrentThreadID() == Int(getpid()) }

/// A `Duration` in nanoseconds (negative durations stay negative).
package func benchNanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
}
