/// The sections of the live dump (`Runtime.dump()`) that the stall watch's reports
/// print too: the pool threads, and the queues that hold work. One formatter, so a
/// deadlock report and a dump read alike (Reliability, "Observing").
///
/// Each section is a heading line and one indented line per entry, plain ASCII but
/// for the breadcrumbs' arrow, without floating-point printing (Embedded Swift).
enum DumpSections {
    /// One line per pool thread: its band, and what it does — the wait it is blocked
    /// in, or the queue and QoS of the item it runs (and for how long, when
    /// `durationsKnown`: the stall watch was looking), or parked.
    static func threads(_ threads: [StallReport.ThreadState], heading: String, durationsKnown: Bool) -> String {
        var text = "  \(heading) (\(threads.count)):\n"
        for thread in threads {
            var line = "    \(thread.name) [\(thread.band.name)] "
            switch thread.state {
            case .blocked:
                line += "waits on \(thread.blockedOn?.description ?? "a Ringlet wait")"
                if let queue = thread.blockedQueue { line += ", running work of queue '\(queue.label)'" }
            case .running:
                line += thread.coveredInKernel ? "is blocked in the kernel (covered by the reserve) on an item"
                    : "runs an item"
                if let label = QueueRegistry.shared.label(ofQueueAt: thread.queueAddress) {
                    line += " of queue '\(label)'"
                }
                line += " at \(thread.priority.level.name)"
                if durationsKnown && thread.onItemFor >= 1_000_000 {
                    line += " (for at least \(StallReport.seconds(thread.onItemFor)) s)"
                }
            case .parked: line += "is parked (idle)"
            case .searching: line += "is looking for work"
            }
            if let chain = Breadcrumb(raw: thread.crumb).chainDescription() { line += "; the item was " + chain }
            text += line + "\n"
        }
        return text
    }

    /// One line per queue that holds work or runs an item (the registry's queues, under
    /// each queue's lock), then the items waiting in global queues (`looseItems`, per
    /// `QoSLevel` raw value, from the scheduler's run queues).
    static func pendingWork(looseItems: [Int], heading: String) -> String {
        var text = "  \(heading):\n"
        var any = false
        // Chains are named after the walk: naming takes the registry's lock again.
        var lines: [(line: String, oldest: Breadcrumb)] = []
        QueueRegistry.shared.forEach { queue in
            if queue.isRoot { return }
            if let line = queue.dumpLine() { lines.append(line) }
        }
        for (line, oldest) in lines {
            text += line
            if let chain = oldest.chainDescription() { text += "; oldest item " + chain }
            text += "\n"
            any = true
        }
        for level in QoSLevel.allLevels where looseItems[level.rawValue] > 0 {
            text += "    global queue at \(level.name): \(looseItems[level.rawValue]) item(s)\n"
            any = true
        }
        if !any { text += "    (none found)\n" }
        return text
    }
}

extension DispatchQueue {
    /// "queue 'x': 3 item(s) (serial, QoS utility, target 'y'), waiting for a thread
    /// at utility" and the breadcrumb of its oldest item, or nil when the queue holds
    /// nothing and runs nothing. Takes the queue's lock. A serial queue's drainer detaches the items it is about to run,
    /// so "running" queues may hold more than the count says.
    func dumpLine() -> (line: String, oldest: Breadcrumb)? {
        lock.lock()
        // Nodes left in the inbox for a coming drain count too, counted where they are:
        // taking them in would wait for a producer between its swap and its link, and a
        // dump must not wait on any thread (a test holding a producer there while it
        // dumped, and the dump holding the registry, hung the process).
        let inboxed = inbox.peek()
        let count = state.fifo.count + inboxed.count
        let running = state.running
        if count == 0 && running == 0 {
            lock.unlock()
            return nil
        }
        let suspended = state.suspendCount
        let inactive = state.isInactive
        let tokens = state.tokensOutstanding
        let tokenLevel = state.tokenPriority.level
        let pendingLevel = state.pendingMaxPriority.level
        let targetLabel = state.target?.label
        let oldest = (state.fifo.head ?? inboxed.first).map { Breadcrumb(node: $0) } ?? .unknown
        lock.unlock()
        var line = "    queue '\(label)': \(count) item(s) ("
        line += isMain ? "main" : isSerial ? "serial" : "concurrent"
        let floor = floorPriority.level
        line += ", QoS \(floor == .unspecified ? "none (items keep theirs)" : floor.name)"
        if count > 0, pendingLevel.rawValue > floor.rawValue, floor != .unspecified {
            line += ", raised to \(pendingLevel.name)"
        }
        if let targetLabel { line += ", target '\(targetLabel)'" }
        line += ")"
        if inactive {
            line += ", inactive (activate() was never called)"
        } else if suspended > 0 {
            line += ", suspended (\(suspended) unbalanced suspend())"
        } else if running > 0 {
            line += ", running (\(running) slot(s) held)"
        } else if tokens > 0 {
            line += ", waiting for a thread at \(tokenLevel.name)"
        }
        return (line, oldest)
    }
}
