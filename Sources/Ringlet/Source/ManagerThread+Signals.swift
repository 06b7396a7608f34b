import Synchronization

// Signal sources: one signalfd for every watched signal, polled on the ring, and
// Ringlet's handler in front of the program's own for signals that reach a thread
// which does not block them (it counts the signal and writes the manager's eventfd).
// Reached only through `KernelSourceSide` (ManagerThread+Sources.swift). Manager
// thread only.

extension ManagerThread {
    func watchSignal(_ signo: Int32, _ source: DispatchSource, _ ring: Ring) {
        let index = Int(signo)
        signals.sources[index].append(source)
        // A source that comes while the handler lingers keeps it (a replaced source).
        signals.lingering[index] = 0
        if signals.sources[index].count > 1 || signals.watched[index] != 0 { return }
        do throws(Errno) {
            try SignalCalls.install(signo)
        } catch {
            ringletWarning("\(source.name): sigaction refused (\(error.name)); the signal is still read from the "
                + "signalfd when every thread blocks it")
        }
        signals.watched[index] = 1
        signals.active.append(signo)
        updateSignalFD(ring)
    }

    func unwatchSignal(_ signo: Int32, _ source: DispatchSource, _ ring: Ring) {
        let index = Int(signo)
        signals.sources[index].removeAll { $0 === source }
        // The dump signal stays watched for the process's life.
        if !signals.sources[index].isEmpty || signo == configuration.dumpSignal { return }
        // Not at once: a program that replaces a source cancels the old one, then
        // makes the new one, and a signal between the two would meet the program's
        // disposition (SIGUSR1's default ends the process). Ringlet's handler stays
        // `signalLingerNanoseconds` more, counting what comes; a new source keeps it.
        signals.lingerGeneration &+= 1
        let generation = signals.lingerGeneration
        signals.lingering[index] = generation
        armTimer(deadline: MonotonicClock.nanoseconds &+ Self.signalLingerNanoseconds, wall: false, interval: 0,
                 leeway: Self.signalLingerNanoseconds / 10, owner: .action { [unowned(unsafe) self] in
                     self.endSignalLinger(signo, generation: generation)
                 })
    }

    /// How long Ringlet's handler for a signal outlives the signal's last source.
    static let signalLingerNanoseconds: UInt64 = 500_000_000

    /// The linger after a signal's last source ended with no new source: the program's
    /// disposition comes back, and the signal leaves the signalfd.
    private func endSignalLinger(_ signo: Int32, generation: UInt64) {
        let index = Int(signo)
        guard signals.lingering[index] == generation, signals.sources[index].isEmpty,
              let ring = ringForSources else { return }
        signals.lingering[index] = 0
        // The handler goes first, then what it caught meanwhile: nothing is left for a
        // later source of the same signal.
        SignalCalls.uninstall(signo)
        _ = SignalCalls.takeCaught(signo)
        signals.watched[index] = 0
        signals.active.removeAll { $0 == signo }
        updateSignalFD(ring)
    }

    func updateSignalFD(_ ring: Ring) {
        do throws(Errno) {
            signals.fd = try SignalCalls.updateSignalFD(signals.fd, watching: signals.watched)
        } catch {
            ringletWarning("signalfd refused (\(error.name)); signal sources will see only signals "
                + "that reach a thread which does not block them")
            return
        }
        armSignalPoll(ring)
    }

    func armSignalPoll(_ ring: Ring) {
        if signals.pollArmed || signals.fd < 0 { return }
        let fd = signals.fd
        retrying(ring) { () throws(Errno) in
            try ring.preparePoll(fd: fd, events: Descriptors.readable, multishot: multishotPolls,
                                 userData: userData(.signals, 0))
        }
        signals.pollArmed = true
    }

    func signalsCompleted(_ completion: Ring.Completion, _ ring: Ring) {
        if !completion.hasMore {
            signals.pollArmed = false
            if completion.result == -Errno.invalidArgument.rawValue { multishotPolls = false }
        }
        if completion.result > 0 && signals.fd >= 0 {
            // A refused read loses nothing: the signals stay pending for the next one.
            try? SignalCalls.takeFromSignalFD(signals.fd, into: &signals.counts)
            for signo in signals.active {
                post(signals.counts[Int(signo)], signal: signo)
                signals.counts[Int(signo)] = 0
            }
        }
        if !signals.active.isEmpty { armSignalPoll(ring) }
    }

    /// Signals Ringlet's handler caught on the program's threads (it wrote the eventfd).
    func takeCaughtSignals() {
        for signo in signals.active { post(SignalCalls.takeCaught(signo), signal: signo) }
    }

    func post(_ count: UInt32, signal signo: Int32) {
        if count == 0 { return }
        if signo == configuration.dumpSignal { OptionalParts.dumpOnSignal(self) }
        if !signals.sources[Int(signo)].isEmpty {
            trace?.record(.sourceEvent, aux: TraceSourceKind.signal.rawValue, arg: count, subject: UInt64(signo))
        }
        for source in signals.sources[Int(signo)] { source.post(UInt(count)) }
    }
}
