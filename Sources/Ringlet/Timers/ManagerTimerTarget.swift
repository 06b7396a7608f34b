/// A one-shot timer whose owner is an object of its own (a `Task.sleep` window,
/// SleepWindows.swift): the manager keeps the object as the timer's owner and calls it,
/// so arming and reaching the timer allocate nothing but the request's own block. A
/// closure would be a heap block more at each step (`Request.run` to arm,
/// `TimerTable.Owner.Target.action` to fire), freed by the manager while the workers allocate
/// from the same malloc arenas: with a thousand sleeps a round, workers waited for an
/// arena's lock.
///
///   submitted --(1) armed--> armed --(2) window reached--> reached
///
///   (1) ManagerThread.takeRequests: `armed(_:)`   (2) ManagerThread.fire: `reached()`
/// Both on the manager thread; a subclass overrides both.
class ManagerTimerTarget {
    /// Manager thread: the timer is in the timer structure, under `handle`.
    func armed(_ handle: TimerQueue.Handle) {}

    /// Manager thread: the timer's window is reached; the timer is gone.
    func reached() {}
}
