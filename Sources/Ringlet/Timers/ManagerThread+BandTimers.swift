import Synchronization

// The manager's side of the timers bands keep (BandTimers.swift,
// Scheduler+BandTimers.swift): it looks at each band at least once a second, and at
// every window of a band it watches because none of that band's workers is parked and
// one blocked; a window it finds reached, it fires itself. Manager thread only.
extension ManagerThread {
    /// How late a band's timers may be before the manager fires them when it does not
    /// watch the band: its workers were all busy (or stuck in the kernel) that long.
    static let bandBackstopNanoseconds: UInt64 = 1_000_000_000

    /// Windows of bands the manager fired since start (`RuntimeStatistics`).
    var bandWindowsFiredByManagerCount: Int { bandWindowsFiredByManager.load(ordering: .relaxed) }

    /// The earliest instant the manager must look at a band's timers (nil: none armed).
    /// A band it watches: the band's aim. Any other: its backstop, set a second after the
    /// band's aim and left there until it passes, so the manager wakes for bands at most
    /// about once a second while their watchers keep the windows.
    func bandDeadline() -> UInt64? {
        let watched = scheduler.bandsStillUnwatched()
        var earliest: UInt64?
        var now: UInt64 = 0
        for band in 0..<3 {
            guard let kept = scheduler.keptTimers[band] else { continue }
            let aim = kept.aim.load(ordering: .acquiring)
            if aim == .max {
                bandBackstops[band] = .max
                continue
            }
            let at: UInt64
            if watched & (1 << UInt8(band)) != 0 {
                at = aim
            } else {
                if now == 0 { now = MonotonicClock.nanoseconds }
                if bandBackstops[band] == .max || bandBackstops[band] <= now {
                    bandBackstops[band] = aim &+ Self.bandBackstopNanoseconds
                }
                at = bandBackstops[band]
            }
            if at < earliest ?? .max { earliest = at }
        }
        return earliest
    }

    /// Fires the reached windows of the bands the manager watches, and of any band
    /// whose backstop passed with a window reached. Inside the reap's wake batch: the handlers go to workers.
    func fireForBands(at now: UInt64) {
        let watched = scheduler.bandsTheManagerWatches.load(ordering: .relaxed)
        for band in 0..<3 {
            guard let kept = scheduler.keptTimers[band] else { continue }
            let bit = UInt8(1) << UInt8(band)
            guard watched & bit != 0 || bandBackstops[band] <= now,
                  kept.aim.load(ordering: .acquiring) <= now else { continue }
            if kept.fireDue(at: now, trace: trace) > 0 {
                bandWindowsFiredByManager.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }
}
