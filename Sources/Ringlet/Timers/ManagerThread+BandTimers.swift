import Synchronization

// The manager's side of the timers bands keep (BandTimers.swift,
// Scheduler+BandTimers.swift): it looks at each band at least once a second (its
// descriptors too, Source/ManagerThread+BandDescriptors.swift), and at
// every window of a band it watches because none of that band's workers is parked and
// one blocked; a window it finds reached, it fires itself. Manager thread only.
extension ManagerThread {
    /// How late a band's timers may be before the manager fires them when it does not
    /// watch the band: its workers were all busy (or stuck in the kernel) that long.
    static let bandBackstopNanoseconds: UInt64 = 1_000_000_000

    /// Windows of bands the manager fired since start (`RuntimeStatistics`).
    var bandWindowsFiredByManagerCount: Int { bandWindowsFiredByManager.load(ordering: .relaxed) }

    /// The earliest instant the manager must look at the bands (nil: no band keeps a
    /// timer or watches a descriptor). A band it watches: the band's aim. The others share
    /// one backstop, set a second after the earliest of their aims (or a second from now
    /// for a band with descriptors only) and left there until it passes, so the manager
    /// wakes for all bands together at most about once a second while their own workers
    /// keep the windows and take the events.
    func bandDeadline() -> UInt64? {
        let watched = scheduler.bandsStillUnwatched()
        var earliest: UInt64?
        var backstopFrom: UInt64 = .max
        var now: UInt64 = 0
        for band in 0..<3 {
            guard let kept = scheduler.keptTimers[band] else { continue }
            let aim = kept.aim.load(ordering: .acquiring)
            // A band's descriptors (BandDescriptors) get the same look, timers or not.
            if aim == .max && !scheduler.bandWatchesDescriptors(band) { continue }
            if watched & (1 << UInt8(band)) != 0 && aim != .max && aim < earliest ?? .max { earliest = aim }
            if aim == .max && now == 0 { now = MonotonicClock.nanoseconds }
            backstopFrom = min(backstopFrom, aim == .max ? now : aim)
        }
        if backstopFrom == .max {
            bandBackstop = .max
            return earliest
        }
        if now == 0 { now = MonotonicClock.nanoseconds }
        // Held until it passes, but brought forward for a band whose look is due sooner
        // (one armed after a far window set the backstop).
        let due = max(backstopFrom, now) &+ Self.bandBackstopNanoseconds
        if bandBackstop == .max || bandBackstop <= now || due < bandBackstop { bandBackstop = due }
        return min(earliest ?? .max, bandBackstop)
    }

    /// Fires the reached windows of the bands the manager watches, and, once the
    /// backstop passed, of every band, and takes what their descriptor sets have ready.
    /// Inside the reap's wake batch: the handlers go to workers.
    func fireForBands(at now: UInt64) {
        let watched = scheduler.bandsTheManagerWatches.load(ordering: .relaxed)
        let backstopPassed = bandBackstop <= now
        for band in 0..<3 {
            guard let kept = scheduler.keptTimers[band] else { continue }
            let bit = UInt8(1) << UInt8(band)
            guard watched & bit != 0 || backstopPassed else { continue }
            if kept.aim.load(ordering: .acquiring) <= now, kept.fireDue(at: now, trace: trace) > 0 {
                bandWindowsFiredByManager.wrappingAdd(1, ordering: .relaxed)
            }
            if backstopPassed, let descriptors = scheduler.keptDescriptors[band] {
                takeBandDescriptorEvents(descriptors)
            }
        }
    }
}
