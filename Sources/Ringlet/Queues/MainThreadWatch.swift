/// Whether the main thread, having run the main queue dry, watches for the next item
/// before it parks, and how long.
///
/// The main queue's items come from other threads' work: a task's hop to the main
/// actor, a worker's `DispatchQueue.main.async`. Back to back, the next one arrives a
/// worker's wake-up after the last one ran. The main queue's drain does not spin for a
/// push as a worker's does (that spin is `spinMicroseconds` long), so parking the main
/// thread added a futex wake-up of the main thread to every hop. So the main thread
/// watches up to `limitNanoseconds` (ten `spinMicroseconds`: the key's unit, and 0
/// turns this off too) while the last gap was shorter than that, and not at all once a
/// gap was longer: a watch that finds nothing is followed by a park whose gap turns
/// watching off, so it costs at most one fruitless watch per gap that was short, and a
/// main queue fed at a UI's pace (milliseconds) never watches.
///
/// A gap is measured from the moment the main thread found no token to the moment the
/// next token was posted, so the main thread's own wake-up is not counted in it.
struct MainThreadWatch {
    /// `spinMicroseconds` a watch lasts.
    static let spinsPerWatch: UInt64 = 10

    /// The longest watch, and the longest gap that turns watching on; 0: never watch.
    let limitNanoseconds: UInt64
    private(set) var watching = false

    /// `spinMicroseconds` of the runtime on `cores` cores. One core never watches: the
    /// thread that would post the next item could run only by preempting the watch.
    init(spinMicroseconds: Int, cores: Int) {
        limitNanoseconds = cores > 1 ? UInt64(max(spinMicroseconds, 0)) &* 1000 &* Self.spinsPerWatch : 0
    }

    /// How long to watch before parking now.
    var watchNanoseconds: UInt64 { watching ? limitNanoseconds : 0 }

    /// The main thread was idle from `idleStart` until a token was posted at `posted`
    /// (monotonic nanoseconds; a token posted before the idle time began is a gap of 0).
    mutating func idleEnded(idleStart: UInt64, posted: UInt64) {
        let gap = posted > idleStart ? posted &- idleStart : 0
        watching = limitNanoseconds > 0 && gap <= limitNanoseconds
    }
}
