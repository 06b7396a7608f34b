#if canImport(_Concurrency)
import _Concurrency

extension Runtime {
    /// Suspends the calling task for at least `nanoseconds`, then resumes it on the
    /// default executor (Ringlet's pool). The sleep is a window in the manager's
    /// coalescing timers, the one `asyncAfter` uses (Architecture, "The path of a
    /// timer"), with `asyncAfter`'s leeway for the task's QoS: no thread and no timer
    /// source. Cost: one work node while it sleeps; never ends early.
    ///
    /// For Embedded Swift programs, which have no `Task.sleep`. It does not end early
    /// when the task is cancelled (check `Task.isCancelled` after it); in full Swift,
    /// `Task.sleep` is the same window and does.
    public static func sleep(nanoseconds: UInt64) async {
        let delay = DispatchTimeInterval.nanoseconds(Int(min(nanoseconds, UInt64(Int.max))))
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { continuation.resume() }
        }
    }
}
#endif
