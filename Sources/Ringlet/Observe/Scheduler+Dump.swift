/// The scheduler's part of the live dump (`Runtime.dump()`).
extension Scheduler {
    /// The pool threads and the run queues as the stall watch would see them, and
    /// whether the per-thread "on this item since" marks are current (they are kept
    /// only while the watch looks: the dump never reads the clock per item).
    func dumpSnapshot() -> (snapshot: StallReport.Snapshot, durationsKnown: Bool) {
        let now = MonotonicClock.nanoseconds
        lock.lock()
        let snapshot = snapshotLocked(now: now)
        let known = watch.armed
        lock.unlock()
        return (snapshot, known)
    }
}
