import Synchronization

// The manager thread's side of dispatch sources: it arms their kernel side (polls on
// the ring, the signal watch, timers), turns completions into events posted to the
// sources, and lets a source go only when nothing can fire for it any more. Only the
// manager thread runs this code.
//
// A poll's user data is tag | slot generation (24 bits) | slot (32 bits), so a
// completion for a source that was cancelled, or whose slot was reused, is dropped.
//
// Timers are armed here directly. The kernel side of read, write, signal, process and
// file-system sources (polls, the signal watch, pidfds, inotify) is reached only
// through `KernelSourceSide`'s closures, which the factories of those kinds install
// (`useKernelSources`): a program that makes only timers and user-data sources does
// not link that code.

/// The manager's entry points into the kernel side of non-timer sources (manager thread).
struct KernelSourceSide {
    /// Arms a source's kernel side; returns an event to post at once (0: none).
    let arm: (DispatchSource, Ring) -> UInt
    /// Disarms it; true when a poll's last completion will finish the job.
    let disarm: (DispatchSource, Ring) -> Bool
    let rearmPoll: (DispatchSource, Ring) -> Void
    let pollCompleted: (Ring.Completion, Ring) -> Void
    let pollRemoveCompleted: (Ring.Completion, Ring) -> Void
    /// Asks again for the poll removals answered EALREADY (`pollRemovalsOwed`).
    let retryPollRemovals: (Ring) -> Void
    let signalsCompleted: (Ring.Completion, Ring) -> Void
    /// Signals Ringlet's handler caught on the program's threads (it wrote the eventfd).
    let takeCaughtSignals: () -> Void
}

extension ManagerThread {
    /// Called by the factories of read, write, signal, process and file-system sources
    /// (any thread), before such a source can be activated: the first call posts the
    /// installation of `kernelSide`, which the manager takes before any `.register`.
    func useKernelSources() {
        lock.withLock {
            if kernelSidePosted { return }
            kernelSidePosted = true
            submit(.run { [self] _ in
                kernelSide = makeKernelSide()
                addDescriptorCheck { [unowned(unsafe) self] _ in checkSourceDescriptors() }
            })
        }
    }

    /// The descriptor watch's look at the read and write sources: one whose descriptor
    /// no longer names its file is cancelled, with a warning. Returns whether any is
    /// still watched.
    private func checkSourceDescriptors() -> Bool {
        var watching = false
        for source in sourceSlots.sources where source.registration.registered && !source.registration.removing {
            if source.isCancelled { continue }
            if source.descriptorStillNamesItsFile() { watching = true }
        }
        return watching
    }

    func makeKernelSide() -> KernelSourceSide {
        KernelSourceSide(
            arm: { [unowned(unsafe) self] in armKernelEvents($0, $1) },
            disarm: { [unowned(unsafe) self] in disarmKernelEvents($0, $1) },
            rearmPoll: { [unowned(unsafe) self] in rearmPoll($0, $1) },
            pollCompleted: { [unowned(unsafe) self] in pollCompleted($0, $1) },
            pollRemoveCompleted: { [unowned(unsafe) self] in pollRemoveCompleted($0, $1) },
            retryPollRemovals: { [unowned(unsafe) self] in retryPollRemovals($0) },
            signalsCompleted: { [unowned(unsafe) self] in signalsCompleted($0, $1) },
            takeCaughtSignals: { [unowned(unsafe) self] in takeCaughtSignals() })
    }

    func register(_ source: DispatchSource, _ ring: Ring) {
        if source.registration.removing || source.registration.registered { return }
        source.registration.registered = true
        if case .timer = source.kind {
            // A band's worker may fire the timer as soon as it is armed (BandTimers.swift):
            // the registration handler is queued first.
            source.registeredWithKernel()
            reschedule(source)
            return
        }
        switch source.kind {
        case .read, .write:
            // The registration handler is queued first: a band's watcher may take an
            // event of the descriptor as soon as it is in the band's set (BandDescriptors).
            source.registeredWithKernel()
            source.post(armKernelSide(source, ring))
        default:
            let immediate = armKernelSide(source, ring)
            // Polls are queued, not yet submitted; the registration handler still runs
            // before any event, which can only come from a later completion, or is
            // posted after it (a process already gone), and after any warning of the arming.
            source.registeredWithKernel()
            source.post(immediate)
        }
    }

    /// Returns an event to post once the registration handler is queued (0: none).
    func armKernelSide(_ source: DispatchSource, _ ring: Ring) -> UInt {
        switch source.kind {
        case .timer:
            reschedule(source)
        case .dataAdd, .dataOr, .dataReplace:
            break
        default:
            guard let kernelSide else { ringletBug("\(source.name): registered without useKernelSources()") }
            return kernelSide.arm(source, ring)
        }
        return 0
    }

    /// `armKernelSide` for read, write, signal, process and file-system sources.
    private func armKernelEvents(_ source: DispatchSource, _ ring: Ring) -> UInt {
        switch source.kind {
        case .read, .write:
            claimSlot(source)
            if !watchByBand(source) { armPoll(source, ring) }
            armDescriptorWatch()
        case .signal(let signo):
            watchSignal(signo, source, ring)
        case .process(let pid, let mask):
            let fd: Int32
            do throws(Errno) {
                fd = try KernelWatches.processExit(pid)
            } catch {
                if error == .noSuchProcess {
                    ringletWarning("\(source.name): no such process (it has exited and been reaped, or never "
                        + "existed); delivering .exit now")
                    if mask.contains(.exit) { return DispatchSource.ProcessEvent.exit.rawValue }
                } else {
                    ringletWarning("\(source.name): pidfd_open failed (\(error.name)): "
                        + Self.pidfdRefusal(error, pid: pid) + ". The source will never fire")
                }
                return 0
            }
            source.registration.ownedFD = fd
            claimSlot(source)
            armPoll(source, ring)
        case .fileSystem(let fd, _):
            let inotify: Int32
            do throws(Errno) {
                inotify = try KernelWatches.fileChanges(of: fd).fd
            } catch {
                ringletWarning("\(source.name): inotify refused to watch fd \(fd) "
                    + "(\(error.name)); raise fs.inotify.max_user_instances or "
                    + "max_user_watches if it says ENOSPC/EMFILE. The source will never fire")
                return 0
            }
            source.registration.ownedFD = inotify
            let status = (try? Descriptors.status(fd)) ?? (size: 0, links: 0)
            source.registration.size = status.size
            source.registration.links = status.links
            claimSlot(source)
            armPoll(source, ring)
        case .pressureTrigger(let fd):
            source.registration.ownedFD = fd
            claimSlot(source)
            armPoll(source, ring)
        case .memoryPressure(let mask):
            MemoryPressureWatch.start(source, mask: mask)
        default:
            break
        }
        return 0
    }

    /// What a pidfd_open(2) error means and what to do. Only ENOSYS means an old
    /// kernel; pids ≤ 0 were refused by `makeProcessSource`.
    static func pidfdRefusal(_ error: Errno, pid: Int32, limits: () -> ProcessLimits = { .current() }) -> String {
        if error == .notImplemented {
            return "this kernel has no pidfd_open, which process sources need (Linux 5.3 or later)"
        }
        if let advice = limits().openFilesAdvice(for: error) { return "a pidfd is a descriptor, and " + advice }
        if error == .invalidArgument {
            return "the kernel refused pid \(pid) (EINVAL: not a process id it accepts)"
        }
        return "the kernel refused a pidfd for pid \(pid) with \(error.name) (errno \(error.rawValue))"
    }

    /// Disarms a source; once no completion can come for it, its cancel handler is
    /// pushed (`finishUnregistering`).
    func unregister(_ source: DispatchSource, _ ring: Ring) {
        if source.registration.removing { return }
        source.registration.removing = true
        if !source.registration.registered {
            source.unregistered()
            return
        }
        switch source.kind {
        case .timer:
            if let handle = source.registration.timer {
                disarmTimer(handle)
                source.registration.timer = nil
            }
            if let kept = source.registration.timerBand {
                kept.disarm(source)
                source.registration.timerBand = nil
            }
        case .dataAdd, .dataOr, .dataReplace:
            break
        default:
            if kernelSide?.disarm(source, ring) == true { return }  // the poll's last completion finishes the job
        }
        finishUnregistering(source)
    }

    /// `unregister` for read, write, signal, process and file-system sources.
    private func disarmKernelEvents(_ source: DispatchSource, _ ring: Ring) -> Bool {
        if case .signal(let signo) = source.kind {
            unwatchSignal(signo, source, ring)
        } else if case .memoryPressure = source.kind {
            MemoryPressureWatch.stop(source)
        } else if stopBandWatch(source) {
            return false
        } else if source.registration.pollArmed {
            removePoll(source, ring)
            return true
        }
        return false
    }

    func finishUnregistering(_ source: DispatchSource) {
        if source.registration.ownedFD >= 0 {
            Descriptors.close(source.registration.ownedFD)
            source.registration.ownedFD = -1
        }
        if source.registration.slot >= 0 {
            sourceSlots.release(source)
            descriptorWatchMayStop()
        }
        source.unregistered()
    }
}
