import Synchronization

// The manager thread's sections of the live dump: armed timers (and which fire in one
// wake-up), active sources, I/O in flight per channel. The manager owns that state, so
// the sections are made on its thread: another thread asks with a `.run` request and
// waits (at most `answerTimeout`); the manager itself (the dump signal) makes them at
// once. And the dump signal: watched on the signalfd from the start when opted in
// (`dumpSignal`), so a dump comes even when every worker is stuck.

extension ManagerThread {
    static let answerTimeout: Int64 = 1_000_000_000
    /// Timers listed one by one; the rest are counted.
    static let timersListed = 16

    /// The manager's sections (any thread).
    func dumpSections() -> String {
        if ThreadControl.threadID == threadID { return dumpSectionsOnManager() }
        let answer = DumpAnswer()
        submit(.run { [self] _ in answer.give(dumpSectionsOnManager()) })
        return answer.take(timeoutNanoseconds: Self.answerTimeout)
            ?? "  manager thread: did not answer within 1 s (it is busy or stuck); timers, sources and I/O not shown\n"
    }

    /// Manager thread only.
    func dumpSectionsOnManager() -> String {
        timersSection() + bandTimersSection() + sourcesSection() + ioSection() + socketSection()
    }

    private func timersSection() -> String {
        let armed = timers.armedEntries()
        var text = "  timers armed (\(armed.count)):\n"
        if armed.isEmpty { return text + "    (none: nothing will wake the manager but requests and I/O)\n" }
        let now = MonotonicClock.nanoseconds
        // Window groups: timers the same wake-up fires — each group starts at the
        // earliest remaining window and takes every timer whose deadline falls before
        // that window's end, as `TimerQueue.nextAim` and `fire` do.
        var group = 0
        var groupEnd: UInt64 = 0
        for (index, timer) in armed.enumerated() {
            if index == 0 || timer.deadline > groupEnd {
                group += 1
                groupEnd = timer.deadline &+ timer.leeway
            } else {
                groupEnd = min(groupEnd, timer.deadline &+ timer.leeway)
            }
            if index >= Self.timersListed { continue }
            let due = timer.deadline > now ? "in \(Self.milliseconds(timer.deadline - now))"
                : "due \(Self.milliseconds(now - timer.deadline)) ago"
            var line = "    \(due), leeway \(Self.milliseconds(timer.leeway))"
            if timer.interval > 0 { line += ", every \(Self.milliseconds(timer.interval))" }
            line += ", window group \(group): " + timerOwnerName(slot: timer.slot)
            text += line + "\n"
        }
        if armed.count > Self.timersListed { text += "    ... and \(armed.count - Self.timersListed) more\n" }
        text += "    \(group) window group(s): the manager wakes once per group\n"
        return text
    }

    /// The timers each band's workers keep (BandTimers.swift): not the manager's wake-ups.
    private func bandTimersSection() -> String {
        var text = ""
        let now = MonotonicClock.nanoseconds
        for case let kept? in scheduler.keptTimers {
            let armed = kept.armedEntries()
            if armed.isEmpty { continue }
            text += "  timers kept by the \(kept.band.name) band's workers (\(armed.count)):\n"
            for entry in armed.prefix(Self.timersListed) {
                let due = entry.deadline > now ? "in \(Self.milliseconds(entry.deadline - now))"
                    : "due \(Self.milliseconds(now - entry.deadline)) ago"
                var line = "    \(due), leeway \(Self.milliseconds(entry.leeway))"
                if entry.interval > 0 { line += ", every \(Self.milliseconds(entry.interval))" }
                text += line + ": " + (entry.source?.name ?? "(released)") + "\n"
            }
            if armed.count > Self.timersListed { text += "    ... and \(armed.count - Self.timersListed) more\n" }
        }
        return text
    }

    private func timerOwnerName(slot: Int) -> String {
        guard let owner = timers.owner(slot: slot) else { return "(released)" }
        let wall = owner.wallOffset != nil ? " (wall clock)" : ""
        switch owner.target {
        case .source(let source): return source.name + wall
        case .action: return "an asyncAfter item or a runtime tick" + wall
        case .target: return "a sleeping task's window"
        }
    }

    private func sourcesSection() -> String {
        var listed: [String] = []
        for source in sourceSlots.sources { listed.append(source.name) }
        for signo in signals.active {
            for source in signals.sources[Int(signo)] { listed.append(source.name) }
            if signo == configuration.dumpSignal {
                listed.append("the dump signal \(signo) (configuration key 'dumpSignal'), watched by the runtime")
            }
        }
        for source in timers.timerSources { listed.append(source.name) }
        for case let kept? in scheduler.keptTimers {
            for entry in kept.armedEntries() { if let source = entry.source { listed.append(source.name) } }
        }
        let active = activeSources.load(ordering: .relaxed)
        var text = "  active sources (\(active) of 'sources' \(configuration.sources)):\n"
        for name in listed { text += "    \(name)\n" }
        let unlisted = active - listed.count
        if unlisted > 0 {
            text += "    and \(unlisted) more without a kernel side armed now (user-data sources, suspended or "
                + "unscheduled timers, sources being registered or cancelled)\n"
        }
        if listed.isEmpty && unlisted <= 0 { text += "    (none)\n" }
        return text
    }

    private func ioSection() -> String {
        guard let engine = ioEngineIfMade else { return "  I/O in flight: none (no DispatchIO channel made)\n" }
        var perChannel: [(channel: DispatchIO, requests: Int, polling: Int)] = []
        for entry in engine.slots {
            guard let entry else { continue }
            let channel = entry.operation.channel
            if let index = perChannel.firstIndex(where: { $0.channel === channel }) {
                perChannel[index].requests += 1
                if entry.polling { perChannel[index].polling += 1 }
            } else {
                perChannel.append((channel, 1, entry.polling ? 1 : 0))
            }
        }
        let total = perChannel.reduce(0) { $0 + $1.requests }
        var text = "  I/O in flight (\(total) request(s), \(engine.waiting.count) operation(s) waiting for a slot):\n"
        for entry in perChannel {
            text += "    channel on fd \(entry.channel.fileDescriptor): \(entry.requests) request(s)"
            if entry.polling > 0 { text += ", \(entry.polling) waiting for readiness" }
            text += "\n"
        }
        if perChannel.isEmpty { text += "    (none)\n" }
        return text
    }

    /// "12.5 ms", without floating-point printing (Embedded Swift).
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let tenths = nanoseconds / 100_000
        return "\(tenths / 10).\(tenths % 10) ms"
    }

    // MARK: The dump signal

    /// Watches `configuration.dumpSignal` on the signalfd (and through Ringlet's
    /// handler), so it never takes the signal's default action. Manager thread, at start.
    func watchDumpSignal(_ ring: Ring) {
        let signo = configuration.dumpSignal
        if kernelSide == nil { kernelSide = makeKernelSide() }
        do throws(Errno) {
            try SignalCalls.install(signo)
        } catch {
            ringletWarning("dumpSignal \(signo): sigaction refused (\(error.name)); the dump comes only when every "
                + "thread blocks the signal")
        }
        signals.watched[Int(signo)] = 1
        signals.active.append(signo)
        updateSignalFD(ring)
    }

    /// The dump signal came: the dump goes to stderr and to `DumpFile`, for
    /// `ringlet dump <pid>`. Manager thread.
    func dumpOnSignal() {
        let text = Runtime.shared.report()
        writeToStandardError(text)
        let path = DumpFile.path(processID: ThreadControl.processID)
        if let error = DumpFile.write(text, to: path) {
            ringletWarning("the dump could not be written to \(path) (\(error.name)); it is on stderr only")
        }
    }
}

/// One answer from the manager thread, waited for with a timeout.
// @unchecked Sendable: `text` under `lock`.
private final class DumpAnswer: @unchecked Sendable {
    private let lock = FutexLock()
    private let given = FutexEvent()
    private var text: String?

    deinit {
        lock.deallocate()
        given.deallocate()
    }

    func give(_ answer: String) {
        lock.withLock { text = answer }
        given.post()
    }

    func take(timeoutNanoseconds: Int64) -> String? {
        let end = MonotonicClock.nanoseconds &+ UInt64(timeoutNanoseconds)
        while true {
            let seen = given.snapshot
            if let answer = lock.withLock({ text }) { return answer }
            let now = MonotonicClock.nanoseconds
            if now >= end { return nil }
            _ = given.wait(ifUnchangedFrom: seen, timeoutNanoseconds: Int64(end - now))
        }
    }
}
