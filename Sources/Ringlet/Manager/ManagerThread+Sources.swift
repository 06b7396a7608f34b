import CRinglet
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
            submit(.run { [self] _ in kernelSide = makeKernelSide() })
        }
    }

    private func makeKernelSide() -> KernelSourceSide {
        KernelSourceSide(
            arm: { [unowned(unsafe) self] in armKernelEvents($0, $1) },
            disarm: { [unowned(unsafe) self] in disarmKernelEvents($0, $1) },
            rearmPoll: { [unowned(unsafe) self] in rearmPoll($0, $1) },
            pollCompleted: { [unowned(unsafe) self] in pollCompleted($0, $1) },
            signalsCompleted: { [unowned(unsafe) self] in signalsCompleted($0, $1) },
            takeCaughtSignals: { [unowned(unsafe) self] in takeCaughtSignals() })
    }

    func register(_ source: DispatchSource, _ ring: Ring) {
        if source.registration.removing || source.registration.registered { return }
        source.registration.registered = true
        let immediate = armKernelSide(source, ring)
        // Polls are queued, not yet submitted; the registration handler still runs
        // before any event, which can only come from a later completion, or is
        // posted after it (a process already gone).
        source.registeredWithKernel()
        source.post(immediate)
    }

    /// Returns an event to post once the registration handler is queued (0: none).
    private func armKernelSide(_ source: DispatchSource, _ ring: Ring) -> UInt {
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
            armPoll(source, ring)
        case .signal(let signo):
            watchSignal(signo, source, ring)
        case .process(let pid, let mask):
            let fd = rl_pidfd_open(pid)
            if fd < 0 {
                let error = Errno(negated: fd)
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
            var watchedMask: UInt32 = 0
            let inotify = rl_inotify_watch_fd(fd, &watchedMask)
            if inotify < 0 {
                ringletWarning("\(source.name): inotify refused to watch fd \(fd) "
                    + "(\(Errno(negated: inotify).name)); raise fs.inotify.max_user_instances or "
                    + "max_user_watches if it says ENOSPC/EMFILE. The source will never fire")
                return 0
            }
            source.registration.ownedFD = inotify
            var size: Int64 = 0, links: Int64 = 0
            _ = rl_fd_stat(fd, &size, &links)
            source.registration.size = size
            source.registration.links = links
            claimSlot(source)
            armPoll(source, ring)
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

    /// Applies a timer source's current schedule (replacing the armed one).
    func reschedule(_ source: DispatchSource) {
        guard source.registration.registered, !source.registration.removing else { return }
        if let old = source.registration.timer {
            timers.cancel(old)
            timerOwners[old.slot] = nil
            source.registration.timer = nil
        }
        guard let spec = source.lock.withLock({ source.timerSpec }), let deadline = spec.deadline else { return }
        let level = QoSPriority(packed: source.eventPriority.load(ordering: .relaxed)).level
        let now = spec.wall ? UInt64(max(WallClock.nanoseconds, 0)) : MonotonicClock.nanoseconds
        let period = spec.interval > 0 ? spec.interval : (deadline > now ? deadline - now : 0)
        let leeway = leewayPolicy.leeway(requested: spec.leeway, period: period, level: level, strict: spec.strict)
        source.registration.timer = armTimer(deadline: deadline, wall: spec.wall, interval: spec.interval,
                                             leeway: leeway, owner: .source(source))
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
                timers.cancel(handle)
                timerOwners[handle.slot] = nil
                source.registration.timer = nil
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
        } else if source.registration.pollArmed {
            let target = sourceUserData(.poll, source)
            retrying(ring) { () throws(Errno) in
                try ring.preparePollRemove(target: target, userData: userData(.pollRemove, 0))
            }
            return true
        }
        return false
    }

    private func finishUnregistering(_ source: DispatchSource) {
        if source.registration.ownedFD >= 0 {
            rl_close(source.registration.ownedFD)
            source.registration.ownedFD = -1
        }
        if source.registration.slot >= 0 {
            sourceSlots[source.registration.slot] = nil
            freeSourceSlots.append(source.registration.slot)
            source.registration.slot = -1
        }
        source.unregistered()
    }

    // MARK: Polls

    private func claimSlot(_ source: DispatchSource) {
        let slot: Int
        if let free = freeSourceSlots.popLast() {
            slot = free
        } else {
            slot = sourceSlots.count
            sourceSlots.append(nil)
        }
        sourceSlots[slot] = source
        sourceGeneration &+= 1
        source.registration.slot = slot
        source.registration.generation = sourceGeneration
    }

    private func sourceUserData(_ tag: Tag, _ source: DispatchSource) -> UInt64 {
        tag.rawValue << 56 | UInt64(source.registration.generation & 0xFF_FFFF) << 32
            | UInt64(UInt32(truncatingIfNeeded: source.registration.slot))
    }

    private func armPoll(_ source: DispatchSource, _ ring: Ring) {
        let fd: Int32, events: UInt32, multishot: Bool
        switch source.kind {
        case .read(let descriptor): (fd, events, multishot) = (descriptor, RL_POLLIN, multishotPolls)
        case .write(let descriptor): (fd, events, multishot) = (descriptor, RL_POLLOUT, multishotPolls)
        case .process: (fd, events, multishot) = (source.registration.ownedFD, RL_POLLIN, false)
        case .fileSystem: (fd, events, multishot) = (source.registration.ownedFD, RL_POLLIN, multishotPolls)
        default: return
        }
        let data = sourceUserData(.poll, source)
        retrying(ring) { () throws(Errno) in
            try ring.preparePoll(fd: fd, events: events, multishot: multishot, userData: data)
        }
        source.registration.pollArmed = true
        source.registration.pollMultishot = multishot
    }

    /// The handler ran after a read or write source's poll ended (see pollCompleted).
    private func rearmPoll(_ source: DispatchSource, _ ring: Ring) {
        let registration = source.registration
        guard registration.registered, !registration.removing, !registration.pollArmed, registration.slot >= 0 else {
            return
        }
        armPoll(source, ring)
    }

    private func pollCompleted(_ completion: Ring.Completion, _ ring: Ring) {
        let slot = Int(completion.userData & 0xFFFF_FFFF)
        let generation = UInt32((completion.userData >> 32) & 0xFF_FFFF)
        guard slot < sourceSlots.count, let source = sourceSlots[slot],
              source.registration.generation & 0xFF_FFFF == generation else { return }  // stale
        let more = completion.flags & RL_CQE_F_MORE != 0
        if !more { source.registration.pollArmed = false }
        if source.registration.removing {
            if !more { finishUnregistering(source) }
            return
        }
        if completion.result < 0 {
            let error = Errno(negated: completion.result)
            if error == .invalidArgument && source.registration.pollMultishot {
                // A kernel before 5.13: one-shot polls, re-armed. Every multishot poll
                // already queued fails the same way, not only the first.
                multishotPolls = false
            } else if Self.isTransient(error) && source.registration.failures < 8 {
                source.registration.failures += 1  // re-armed below; the event is not lost
            } else {
                ringletWarning("\(source.name): the kernel stopped watching it (\(error.name)); cancelling the "
                    + "source. Keep the descriptor open until the source's cancel handler runs")
                source.cancel()
                return
            }
        } else {
            source.registration.failures = 0
            let levelTriggered: Bool
            switch source.kind {
            case .read, .write: levelTriggered = true
            default: levelTriggered = false
            }
            if levelTriggered && !more {
                // The poll ended on a ready descriptor (a one-shot poll, or a file that
                // cannot be polled, such as a regular file): armed again now, it would
                // complete at once, again and again, until the handler drains it. The
                // delivery re-arms it after the handler (`rearmPoll`).
                source.pollRearmOwed.store(true, ordering: .releasing)
                deliverPollEvent(source, revents: UInt32(bitPattern: completion.result))
                return
            }
            deliverPollEvent(source, revents: UInt32(bitPattern: completion.result))
            if case .process = source.kind { return }  // an exit comes once
        }
        if !source.registration.pollArmed { armPoll(source, ring) }
    }

    /// Errors a poll may end with that a new poll can cure: the kernel ran short
    /// (ENOMEM, EAGAIN, EBUSY), a signal (EINTR), a multishot poll ended by the kernel
    /// (ECANCELED, as on CQ overflow).
    static func isTransient(_ error: Errno) -> Bool {
        error == .noMemory || error == .tryAgain || error == .busy || error == .interrupted || error == .cancelled
    }

    private func deliverPollEvent(_ source: DispatchSource, revents: UInt32) {
        switch source.kind {
        case .read, .write:
            source.post(1)
        case .process(_, let mask):
            if mask.contains(.exit) { source.post(DispatchSource.ProcessEvent.exit.rawValue) }
        case .fileSystem(let fd, let mask):
            let bits = rl_inotify_take(source.registration.ownedFD)
            if bits <= 0 { return }
            let events = fileSystemEvents(UInt32(truncatingIfNeeded: bits), fd: fd, source).intersection(mask)
            source.post(events.rawValue)
        default:
            break
        }
    }

    /// Translates inotify bits to Dispatch's file-system events, with fstat telling
    /// growth (`.extend`) and link changes (`.link`, `.delete` at zero links).
    private func fileSystemEvents(_ bits: UInt32, fd: Int32, _ source: DispatchSource)
        -> DispatchSource.FileSystemEvent {
        var events: DispatchSource.FileSystemEvent = []
        var size: Int64 = 0, links: Int64 = 0
        let stated = rl_fd_stat(fd, &size, &links) == 0
        if bits & RL_IN_MODIFY != 0 {
            events.insert(.write)
            if stated && size > source.registration.size { events.insert(.extend) }
        }
        if bits & RL_IN_ATTRIB != 0 {
            if stated && links != source.registration.links {
                events.insert(.link)
                if links == 0 { events.insert(.delete) }
            } else {
                events.insert(.attrib)
            }
        }
        if bits & RL_IN_DELETE_SELF != 0 { events.insert(.delete) }
        if bits & RL_IN_MOVE_SELF != 0 { events.insert(.rename) }
        if bits & RL_IN_UNMOUNT != 0 { events.insert(.revoke) }
        if stated {
            source.registration.size = size
            source.registration.links = links
        }
        return events
    }

    // MARK: Signals

    private func watchSignal(_ signo: Int32, _ source: DispatchSource, _ ring: Ring) {
        let index = Int(signo)
        signals.sources[index].append(source)
        if signals.sources[index].count > 1 { return }
        let installed = rl_signal_install(signo)
        if installed < 0 {
            ringletWarning("\(source.name): sigaction refused (\(Errno(negated: installed).name))")
        }
        signals.watched[index] = 1
        signals.active.append(signo)
        updateSignalFD(ring)
    }

    private func unwatchSignal(_ signo: Int32, _ source: DispatchSource, _ ring: Ring) {
        let index = Int(signo)
        signals.sources[index].removeAll { $0 === source }
        if !signals.sources[index].isEmpty { return }
        // The handler goes first, then what it caught meanwhile: nothing is left for a
        // later source of the same signal.
        _ = rl_signal_uninstall(signo)
        _ = rl_signal_take_caught(signo)
        signals.watched[index] = 0
        signals.active.removeAll { $0 == signo }
        updateSignalFD(ring)
    }

    private func updateSignalFD(_ ring: Ring) {
        let current = signals.fd
        let fd = signals.watched.withUnsafeBufferPointer { rl_signalfd_update(current, $0.baseAddress) }
        if fd < 0 {
            ringletWarning("signalfd refused (\(Errno(negated: fd).name)); signal sources will see only signals "
                + "that reach a thread which does not block them")
            return
        }
        signals.fd = fd
        armSignalPoll(ring)
    }

    private func armSignalPoll(_ ring: Ring) {
        if signals.pollArmed || signals.fd < 0 { return }
        let fd = signals.fd
        retrying(ring) { () throws(Errno) in
            try ring.preparePoll(fd: fd, events: RL_POLLIN, multishot: multishotPolls, userData: userData(.signals, 0))
        }
        signals.pollArmed = true
    }

    private func signalsCompleted(_ completion: Ring.Completion, _ ring: Ring) {
        if completion.flags & RL_CQE_F_MORE == 0 {
            signals.pollArmed = false
            if completion.result == -Errno.invalidArgument.rawValue { multishotPolls = false }
        }
        if completion.result > 0 && signals.fd >= 0 {
            let fd = signals.fd
            _ = signals.counts.withUnsafeMutableBufferPointer { rl_signalfd_take(fd, $0.baseAddress) }
            for signo in signals.active {
                post(signals.counts[Int(signo)], signal: signo)
                signals.counts[Int(signo)] = 0
            }
        }
        if !signals.active.isEmpty { armSignalPoll(ring) }
    }

    /// Signals Ringlet's handler caught on the program's threads (it wrote the eventfd).
    private func takeCaughtSignals() {
        for signo in signals.active { post(rl_signal_take_caught(signo), signal: signo) }
    }

    private func post(_ count: UInt32, signal signo: Int32) {
        if count == 0 { return }
        for source in signals.sources[Int(signo)] { source.post(UInt(count)) }
    }

    // MARK: Wall-clock changes

    /// Arms the clock-change watch the first time a wall-clock timer is scheduled.
    func watchClockChanges() {
        guard clockWatchFD < 0, let ring = ringForSources else { return }
        let fd = rl_clock_change_watch(-1)
        if fd < 0 {
            ringletWarning("timerfd refused (\(Errno(negated: fd).name)); wall-clock timers will not follow "
                + "changes of the clock")
            clockWatchFD = Int32.max  // do not try again
            return
        }
        clockWatchFD = fd
        armClockWatch(ring)
    }

    private func armClockWatch(_ ring: Ring) {
        let fd = clockWatchFD
        retrying(ring) { () throws(Errno) in
            try ring.preparePoll(fd: fd, events: RL_POLLIN, multishot: false, userData: userData(.clockChange, 0))
        }
    }

    func clockChanged(_ completion: Ring.Completion, _ ring: Ring) {
        if completion.result > 0 && rl_clock_change_watch(clockWatchFD) < 0 {
            // The timerfd is closed: stop watching (timers keep their last offset).
            ringletWarning("the wall-clock watch could not be re-armed; wall-clock timers will not follow "
                + "further changes of the clock")
            clockWatchFD = Int32.max
        } else {
            armClockWatch(ring)
        }
        moveWallClockTimers()
    }

    /// Moves every wall-clock timer by how much the wall clock moved against the
    /// monotonic clock, so each still fires when the wall clock reads its deadline.
    func moveWallClockTimers() {
        let offset = Self.wallClockOffset()
        for slot in timerOwners.indices {
            guard var owner = timerOwners[slot], let old = owner.wallOffset, old != offset,
                  let handle = timers.currentHandle(slot: slot),
                  let deadline = timers.deadline(of: handle) else { continue }
            let moved = max(Int64(bitPattern: deadline) &+ (old &- offset), 0)
            guard let newHandle = timers.move(handle, to: UInt64(moved)) else { continue }
            owner.wallOffset = offset
            timerOwners[slot] = owner
            if case .source(let source) = owner.target { source.registration.timer = newHandle }
        }
    }
}
