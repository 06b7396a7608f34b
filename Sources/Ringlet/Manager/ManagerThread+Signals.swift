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
