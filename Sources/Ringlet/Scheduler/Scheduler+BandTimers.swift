import Synchronization

/// How a band's workers keep its timers (BandTimers.swift; Architecture, "Timers kept
/// by their band"). One parked worker of each band, its watcher, sleeps until the band's
/// next window instead of without a limit; when the window comes it leaves the parked
/// list, fires the window and runs the handlers it pushed itself — the parked workers of
/// its band that its pushes would have woken stay asleep. A worker that finishes a node
/// fires a window that has come meanwhile. So a window costs one wake-up, the watcher's.
///
///   parked --(1) window reached--> firing --(2)--> searching --> running
///   parked (watcher) --(3) earlier window armed--> parked (looks at the aim again)
///
///   (1) `park`, at the watcher's timeout   (2) `fireKeptTimers`, wakes taken on itself
///   (3) `bandAimMovedEarlier`, from the manager's `reschedule`
///
/// Who fires while the band has no free worker: a worker of the band that enters a
/// Ringlet wait with none of its band parked asks the manager to watch the band while
/// any of its workers is blocked (`bandsTheManagerWatches`), and the manager also looks at every band at least once a
/// second (`ManagerThread.bandBackstopNanoseconds`), so that a band whose workers are
/// all stuck in the kernel still has its timers fired and their handlers covered by the
/// reserve and reported by the stall watch, as the manager's own timers are.
extension Scheduler {
    /// The set that watches descriptors whose handlers run at run-queue `index`, nil
    /// when that band has no worker (the manager's ring polls them).
    func keptDescriptors(forIndex index: Int) -> BandDescriptors? {
        let band = WorkerBand.wakeOrder(for: index).first
        return band == .reserve ? nil : keptDescriptors[band.rawValue]
    }

    /// The table that keeps timers whose handlers run at run-queue `index`, nil when that
    /// band has no worker (the manager keeps those timers).
    func keptTimers(forIndex index: Int) -> BandTimers? {
        let band = WorkerBand.wakeOrder(for: index).first
        return band == .reserve ? nil : keptTimers[band.rawValue]
    }

    /// Parks `worker` (already listed idle, `state == .parked`) until it is woken, or,
    /// as its band's watcher, until the band's next window, which it then fires.
    /// Returns nil: the worker loops into `nextNode` and takes what it pushed.
    func park(_ worker: Worker) -> WorkNodeRef? {
        let trace = worker.context?.trace
        trace?.record(.parked)
        let kept = worker.band == .reserve ? nil : keptTimers[worker.band.rawValue]
        let band = worker.band.rawValue
        while true {
            // The snapshot before the aim: a poke (`bandAimMovedEarlier`) publishes the
            // new aim before it posts, so either the wait sees the post or the read
            // below sees the aim.
            let seen = worker.event.snapshot
            lock.lock()
            if worker.state != .parked {
                lock.unlock()
                trace?.record(.woke)
                return nil
            }
            var until = UInt64.max
            var isWatcher = false
            if let kept {
                if timerWatchers[band] == nil { timerWatchers[band] = worker }
                isWatcher = timerWatchers[band] === worker
                if isWatcher { until = kept.aim.load(ordering: .acquiring) }
            }
            let now = until == .max ? 0 : MonotonicClock.nanoseconds
            if let kept, until <= now {
                unparkLocked(worker)
                lock.unlock()
                trace?.record(.woke)
                fireKeptTimers(kept, on: worker)
                return nil
            }
            lock.unlock()
            let timeout = until == .max ? -1 : Int64(clamping: until - now)
            if isWatcher, let watched = keptDescriptors[band], watched.watchesAny {
                // The watcher of a band with descriptors sleeps in their epoll set.
                var left = false
                let taken = watched.wait(worker.event, ifUnchangedFrom: seen, timeoutNanoseconds: timeout,
                                         into: worker.readyEvents, left: &left)
                // A new watcher waits for the set: it moves in now.
                if left { bandAimMovedEarlier(worker.band) }
                if let ready = taken, ready > 0 {
                    lock.lock()
                    if worker.state == .parked { unparkLocked(worker) }
                    lock.unlock()
                    trace?.record(.woke)
                    watched.lastLook.store(MonotonicClock.nanoseconds, ordering: .relaxed)
                    runDescriptorEvents(watched, ready, on: worker)
                    return nil
                }
                if taken != nil { continue }
                // The watcher before still sleeps in the set: it posts this one as it leaves.
            }
            _ = worker.event.wait(ifUnchangedFrom: seen, timeoutNanoseconds: timeout)
        }
    }

    /// A busy worker's look at its band's descriptors while no watcher sleeps in them:
    /// it runs the handlers of what it finds, as a firing worker does.
    func takeDescriptorEvents(_ watched: BandDescriptors, on worker: Worker) {
        var left = false
        let ready = watched.takeReady(into: worker.readyEvents, left: &left)
        if left { bandAimMovedEarlier(worker.band) }
        if ready > 0 { runDescriptorEvents(watched, ready, on: worker) }
    }

    /// Merges the `ready` events a look of `worker` left in its buffer into their sources
    /// and runs the handlers on `worker`.
    private func runDescriptorEvents(_ watched: BandDescriptors, _ ready: Int, on worker: Worker) {
        takingOwnPushes(on: worker) { trace in
            _ = watched.deliver(worker.readyEvents, ready, byManager: false, trace: trace)
        }
    }

    /// Whether band `band` (its raw value) has descriptors in its set.
    func bandWatchesDescriptors(_ band: Int) -> Bool { keptDescriptors[band]?.watchesAny ?? false }

    /// Invoked with the lock held: `worker` leaves the parked list by itself.
    private func unparkLocked(_ worker: Worker) {
        let band = worker.band.rawValue
        if let at = idle[band].firstIndex(where: { $0 === worker }) { idle[band].remove(at: at) }
        if timerWatchers[band] === worker { timerWatchers[band] = nil }
        worker.state = .searching
    }

    /// Fires the band's window on `worker` (not parked), which then runs the handlers.
    func fireKeptTimers(_ kept: BandTimers, on worker: Worker) {
        takingOwnPushes(on: worker) { trace in _ = kept.fireDue(at: MonotonicClock.nanoseconds, trace: trace) }
    }

    /// Runs `body` (a window's fires, a look at the band's descriptors) on `worker`, not
    /// parked, which then runs the handlers `body` pushed: pushes for its band's own
    /// work wake nobody (`enqueue`, `callerTakesItNext`); a parked worker of its band
    /// that another push chose (work another band's workers may take too) is put back
    /// to sleep unwoken; wakes of other bands go out.
    func takingOwnPushes(on worker: Worker, _ body: (TraceBuffer?) -> Void) {
        guard let context = worker.context else { return }
        context.batchingWakes = true
        body(context.trace)
        context.batchingWakes = false
        if context.batchedWakes.isEmpty { return }
        var others: [Worker] = []
        var taken = 0
        lock.lock()
        for picked in context.batchedWakes {
            if picked.band == worker.band && picked.state == .searching {
                picked.state = .parked
                idle[picked.band.rawValue].append(picked)
                taken += 1
            } else {
                others.append(picked)
            }
        }
        lock.unlock()
        context.batchedWakes.removeAll(keepingCapacity: true)
        if taken > 0 { wakesTakenByFiringWorker.wrappingAdd(taken, ordering: .relaxed) }
        for picked in others { picked.event.post() }
    }

    /// Timers the bands keep now, windows they fired since start (by their workers or
    /// the manager), and wakes the firing workers took on themselves (`RuntimeStatistics`).
    var bandTimerCounts: (armed: Int, windows: Int, wakesTaken: Int) {
        var armed = 0
        var windows = 0
        for case let kept? in keptTimers {
            armed += kept.armedCount
            windows += kept.windowsFired.load(ordering: .relaxed)
        }
        return (armed, windows, wakesTakenByFiringWorker.load(ordering: .relaxed))
    }

    /// Descriptor events the bands' sets gave their workers and the manager since start.
    var bandDescriptorEvents: (byBands: Int, byManager: Int) {
        var counts = (0, 0)
        for case let watched? in keptDescriptors {
            counts.0 += watched.eventsTakenByBand.load(ordering: .relaxed)
            counts.1 += watched.eventsTakenByManager.load(ordering: .relaxed)
        }
        return counts
    }

    /// True when the calling thread is a worker firing its band's window (or taking its
    /// band's descriptor events) and work at `index` is its band's own: it runs what it
    /// pushes next, so nothing waits for a thread.
    @inline(__always)
    func callerTakesItNext(_ index: Int) -> Bool {
        guard let raw = ThreadControl.contextPointer else { return false }
        return Unmanaged<ThreadContext>.fromOpaque(raw)._withUnsafeGuaranteedRef { context in
            guard context.batchingWakes, let worker = context.worker else { return false }
            return WorkerBand.wakeOrder(for: index).first == worker.band
        }
    }

    /// The manager armed a timer that moved `band`'s next window earlier: its watcher (or
    /// any parked worker of the band, which becomes the watcher) looks again.
    func bandAimMovedEarlier(_ band: WorkerBand) {
        lock.lock()
        let watcher = timerWatchers[band.rawValue] ?? idle[band.rawValue].last
        lock.unlock()
        watcher?.event.post()
    }

    /// Invoked with the lock held, from `workerWillBlock`: a parked worker of the
    /// blocking worker's band to post so that it becomes the band's watcher, when the
    /// band has none (its watcher woke to fire or take events, and is the one blocking
    /// now) and keeps timers or descriptors; nil otherwise. Without it the band's windows
    /// and events would wait for the manager's once-a-second look while a worker idles.
    func watcherToPostLocked(_ worker: Worker) -> Worker? {
        let band = worker.band.rawValue
        guard worker.band != .reserve, timerWatchers[band] == nil, let idle = idle[band].last,
              let kept = keptTimers[band] else { return nil }
        return bandWatchesDescriptors(band) || kept.aim.load(ordering: .relaxed) != .max ? idle : nil
    }

    /// Invoked with the lock held, from `workerWillBlock`: when the blocking worker's
    /// band keeps timers and none of its workers is parked, the manager watches the band
    /// until none of its workers is blocked. Returns the band's aim when the manager has
    /// to hear of it by then (the caller tells it once unlocked; 0, at once, when the
    /// band watches descriptors, whose set the manager then polls), else nil.
    func bandLosesItsWatcherLocked(_ worker: Worker) -> UInt64? {
        guard worker.band != .reserve, let kept = keptTimers[worker.band.rawValue],
              idle[worker.band.rawValue].isEmpty else { return nil }
        // Descriptors in the band's set: the manager polls the set from now on.
        let aim = bandWatchesDescriptors(worker.band.rawValue) ? 0 : kept.aim.load(ordering: .relaxed)
        if aim == .max { return nil }
        let bit = UInt8(1) << UInt8(worker.band.rawValue)
        if bandsTheManagerWatches.bitwiseOr(bit, ordering: .relaxed).oldValue & bit != 0 { return nil }
        bandWatchRequests.wrappingAdd(1, ordering: .relaxed)
        return aim
    }

    /// On the manager thread: stops watching the bands none of whose workers is blocked
    /// any more (in a Ringlet wait, or in the kernel as the stall watch found); returns
    /// the bands it still watches.
    func bandsStillUnwatched() -> UInt8 {
        let flagged = bandsTheManagerWatches.load(ordering: .relaxed)
        if flagged == 0 { return 0 }
        var blocked: UInt8 = 0
        lock.withLock {
            for worker in workers where worker.band != .reserve && (worker.state == .blocked || worker.coveredInKernel) {
                blocked |= 1 << UInt8(worker.band.rawValue)
            }
        }
        let cleared = flagged & ~blocked
        if cleared != 0 { bandsTheManagerWatches.bitwiseAnd(~cleared, ordering: .relaxed) }
        return flagged & blocked
    }
}
