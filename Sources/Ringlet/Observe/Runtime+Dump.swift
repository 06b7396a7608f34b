import Synchronization

/// The live dump: what the runtime is doing now, as text a person reads (Reliability,
/// "Observing"). The stall watch's reports print the same thread and queue sections.
extension Runtime {
    /// A report of the runtime right now: each pool thread (band, state, the queue,
    /// QoS and breadcrumb of the item it runs, or the wait it is blocked in), each
    /// queue holding work (label, kind, QoS and raise, target, pending count, state,
    /// where its oldest item came from), the items waiting in global queues, armed
    /// timers (next deadlines, leeway, which fire in one wake-up), active sources
    /// (kind, fd or signal, queue), I/O in flight per channel, and the pools in use.
    ///
    /// Cost: takes the scheduler lock briefly, the queue registry's lock while it walks
    /// every queue (taking each queue's lock in turn), and asks the manager thread for
    /// its sections (waiting at most a second when the manager is busy); allocates the
    /// text. For a person or a tool to read — not for a hot path. Never traps.
    ///
    /// A program opts into dumps on a signal with the configuration key `dumpSignal`;
    /// `ringlet dump <pid>` then asks it for one.
    public static func dump() -> String { shared.report() }

    /// Writes `dump()` to stderr.
    public static func printDump() { writeToStandardError(shared.report()) }

    /// The report of this runtime (see `Runtime.dump()`).
    func report() -> String {
        let snapshot = scheduler.dumpSnapshot()
        var text = "Ringlet dump of process \(ThreadControl.processID): board '\(profile?.board ?? "(a configuration)")', "
            + "\(configuration.workers) workers + \(configuration.reserve) reserve + 1 manager thread\n"
        text += DumpSections.threads(snapshot.snapshot.threads, heading: "pool threads",
                                     durationsKnown: snapshot.durationsKnown)
        text += DumpSections.pendingWork(looseItems: snapshot.snapshot.looseItems, heading: "queues holding work")
        text += manager.dumpSections()
        text += poolsSection()
        return text
    }

    private func poolsSection() -> String {
        let counters = manager.counters
        var text = "  pools:\n"
        text += "    work nodes: \(pool.inUse) in use or cached by threads of \(pool.capacity) ('workNodes'), "
            + "peak \(pool.peakInUse), \(pool.exhaustionWaits) wait(s) for a free node, "
            + "\(pool.backlogYieldCount) yield(s) to a backlog\n"
        text += "    sources: \(manager.activeSources.load(ordering: .relaxed)) active of \(configuration.sources) "
            + "('sources')\n"
        text += "    timers: \(counters.armedTimers) armed; the manager woke \(counters.wakeups) time(s) since start\n"
        if MemoryTrim.trims > 0 {
            text += "    memory pressure: \(MemoryTrim.trims) trim(s) at .critical gave \(MemoryTrim.bytes) bytes "
                + "back to the system\n"
        }
        if let engine = manager.ioEngineIfMade {
            let io = engine.counters
            text += "    I/O requests: \(io.inFlight) in flight of \(configuration.ioRequests) ('ioRequests'), "
                + "peak \(io.peak)\n"
        }
        return text
    }
}
