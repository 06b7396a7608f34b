import Synchronization

/// The timers one worker band keeps itself (Architecture, "Timers kept by their band"):
/// repeating and one-shot timer sources whose handlers that band's workers run. The
/// band's idle worker sleeps until the earliest window (`aim`) and fires it itself, then
/// runs the handlers it pushed: one wake-up per window, where a timer the manager keeps
/// costs two (the manager's, then the worker's it hands the handler to).
///
/// Any thread may arm, disarm or fire, under `lock`; fires run under it too, so a timer
/// disarmed (a source cancelled or rescheduled) never fires after `disarm` returns. The
/// manager arms and disarms (its `reschedule` and `unregister`), the band's workers fire
/// (`Scheduler+BandTimers.swift`), and the manager fires in their stead while the band
/// may have no free worker (`Scheduler.bandsTheManagerWatches`).
///
///   (1) arm --> armed --(2) disarm--> gone
///                 |--(3) due, one-shot--> gone
///                 |--(3) due, repeating--> armed under a new generation
///
///   (1) ManagerThread.reschedule   (2) reschedule, unregister   (3) fireDue
// @unchecked Sendable: `table` and each source's `bandTimer` under `lock`; `aim` atomic.
final class BandTimers: @unchecked Sendable {
    let band: WorkerBand
    private let lock = FutexLock()
    // Unchecked: `lock` keeps the accesses apart (Scheduler's `runQueues` says why).
    @exclusivity(unchecked) private var table = TimerTable()
    /// When the band's watcher must wake (`TimerQueue.nextAim`; `.max`: no timer).
    /// Written under `lock`, read by workers without it.
    let aim = Atomic<UInt64>(.max)
    /// When the band's first window opens (`.max`: no timer): a worker of the band that
    /// is awake anyway after that — it took a descriptor's event, it finished a node —
    /// fires the window then, inside it, rather than let the watcher wake again at `aim`.
    /// Written under `lock`, read by workers without it.
    let opens = Atomic<UInt64>(.max)
    /// Windows fired, and timer fires in them, since start (`RuntimeStatistics`).
    let windowsFired = Atomic<Int>(0)
    let firesInWindows = Atomic<Int>(0)

    init(band: WorkerBand) { self.band = band }

    deinit { lock.deallocate() }

    /// Arms `source`'s timer, replacing any it had here; returns whether the band's
    /// aim moved earlier (its watcher then has to look again).
    func arm(_ source: DispatchSource, deadline: UInt64, leeway: UInt64, interval: UInt64) -> Bool {
        lock.withLock {
            if let old = source.bandTimer { table.disarm(old) }
            let before = aim.load(ordering: .relaxed)
            source.bandTimer = table.arm(deadline: deadline, leeway: leeway, interval: interval, advance: 0,
                                         owner: TimerTable.Owner(target: .source(source)))
            publishAim()
            return aim.load(ordering: .relaxed) < before
        }
    }

    /// Disarms `source`'s timer if it has one here. No fire of it starts afterwards.
    func disarm(_ source: DispatchSource) {
        lock.withLock {
            guard let handle = source.bandTimer else { return }
            source.bandTimer = nil
            table.disarm(handle)
            publishAim()
        }
    }

    /// Fires every timer whose window contains `now` (their sources merge the fires and
    /// push their deliveries); returns how many fired.
    func fireDue(at now: UInt64, trace: TraceBuffer?) -> Int {
        lock.withLock {
            let firings = table.due(at: now)
            var fired = 0
            for firing in firings {
                guard let settled = table.settle(firing), case .source(let source) = settled.target else { continue }
                source.bandTimer = settled.current
                trace?.record(.sourceEvent, aux: TraceSourceKind.timer.rawValue, subject: settled.count)
                source.timerFired(count: settled.count)
                fired += 1
            }
            publishAim()
            if fired > 0 {
                trace?.record(.timerWindow, arg: UInt32(truncatingIfNeeded: fired))
                windowsFired.wrappingAdd(1, ordering: .relaxed)
                firesInWindows.wrappingAdd(fired, ordering: .relaxed)
            }
            return fired
        }
    }

    /// Whether `source` has a timer armed here now.
    func isArmed(_ source: DispatchSource) -> Bool {
        lock.withLock { source.bandTimer.map { table.isArmed($0) } ?? false }
    }

    /// Timers armed now.
    var armedCount: Int { lock.withLock { table.armedCount } }

    /// Every armed timer, soonest first, with its source (for the live dump).
    func armedEntries() -> [(deadline: UInt64, leeway: UInt64, interval: UInt64, source: DispatchSource?)] {
        lock.withLock {
            table.armedEntries().map { entry in
                var source: DispatchSource?
                if let owner = table.owner(slot: entry.slot), case .source(let owned) = owner.target { source = owned }
                return (entry.deadline, entry.leeway, entry.interval, source)
            }
        }
    }

    /// Under `lock`.
    private func publishAim() {
        opens.store(table.earliestDeadline() ?? .max, ordering: .releasing)
        aim.store(table.nextAim() ?? .max, ordering: .releasing)
    }
}
