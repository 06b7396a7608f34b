/// A timeout turned into an absolute monotonic deadline, for wait loops.
struct WaitDeadline {
    /// Nil: no limit.
    let end: UInt64?

    init(relativeNanoseconds: Int64) {
        end = relativeNanoseconds < 0 ? nil : MonotonicClock.nanoseconds &+ UInt64(relativeNanoseconds)
    }

    /// Nanoseconds left (-1: no limit), or nil when the deadline has passed.
    var remaining: Int64? {
        guard let end else { return -1 }
        let now = MonotonicClock.nanoseconds
        return now >= end ? nil : Int64(end - now)
    }
}
