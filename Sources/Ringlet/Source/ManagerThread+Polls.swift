import Synchronization

// Polls on the ring for read, write, process and file-system sources. A poll's user
// data is tag | slot generation (24 bits) | slot (32 bits), so a completion for a
// source that was cancelled, or whose slot was reused, is dropped. Reached only
// through `KernelSourceSide` (ManagerThread+Sources.swift). Manager thread only.

extension ManagerThread {
    func claimSlot(_ source: DispatchSource) {
        sourceSlots.claim(source)
    }

    func sourceUserData(_ tag: Tag, _ source: DispatchSource) -> UInt64 {
        tag.rawValue << 56 | UInt64(source.registration.generation & 0xFF_FFFF) << 32
            | UInt64(UInt32(truncatingIfNeeded: source.registration.slot))
    }

    func armPoll(_ source: DispatchSource, _ ring: Ring) {
        let fd: Int32, events: UInt32, multishot: Bool
        switch source.kind {
        case .read(let descriptor): (fd, events, multishot) = (descriptor, Descriptors.readable, multishotPolls)
        case .write(let descriptor): (fd, events, multishot) = (descriptor, Descriptors.writable, multishotPolls)
        case .process: (fd, events, multishot) = (source.registration.ownedFD, Descriptors.readable, false)
        case .fileSystem: (fd, events, multishot) = (source.registration.ownedFD, Descriptors.readable, multishotPolls)
        case .pressureTrigger(let trigger): (fd, events, multishot) = (trigger, PressureFiles.triggered, multishotPolls)
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
    func rearmPoll(_ source: DispatchSource, _ ring: Ring) {
        let registration = source.registration
        guard registration.registered, !registration.removing, !registration.pollArmed, registration.slot >= 0 else {
            return
        }
        armPoll(source, ring)
    }

    /// The source a poll's (or its removal's) user data names; nil when stale.
    private func polledSource(_ userData: UInt64) -> DispatchSource? {
        let slot = Int(userData & 0xFFFF_FFFF)
        let generation = UInt32((userData >> 32) & 0xFF_FFFF)
        return sourceSlots.source(slot: slot, generation: generation)
    }

    /// Asks the kernel to end the source's poll (cancellation): its last completion,
    /// without IORING_CQE_F_MORE, then finishes the job (`pollCompleted`).
    func removePoll(_ source: DispatchSource, _ ring: Ring) {
        let (target, data) = (sourceUserData(.poll, source), sourceUserData(.pollRemove, source))
        retrying(ring) { () throws(Errno) in
            try ring.preparePollRemove(target: target, userData: data)
        }
    }

    /// The kernel's answer to `removePoll`. EALREADY: it was handling a wake-up of the
    /// poll (the ring's deferred task work, which runs only when the manager waits, had
    /// not run when the removal was submitted), so the poll stays armed — a multishot
    /// one until the next wake-up, which may never come — and the cancel handler would
    /// wait for ever. The removal is asked again after the manager's next wait, which
    /// runs that work (IORING_SETUP_DEFER_TASKRUN: io_uring_enter with GETEVENTS), not
    /// here: asked again inside the reap, a full submission queue is submitted without
    /// waiting, the removal meets the same pending work and is answered EALREADY
    /// again, and the reap never ends (8,000 sources cancelled right after activation
    /// spun the manager for good). 0 (removed) and ENOENT (the poll had ended) leave it
    /// to the poll's last completion.
    func pollRemoveCompleted(_ completion: Ring.Completion, _ ring: Ring) {
        guard completion.result == -Errno.alreadyInProgress.rawValue, let source = polledSource(completion.userData),
              source.registration.removing, source.registration.pollArmed else { return }
        pollRemovalsOwed.append(source)
    }

    /// Asks again for the removals answered EALREADY before the manager's last wait.
    func retryPollRemovals(_ ring: Ring) {
        let owed = pollRemovalsOwed
        pollRemovalsOwed.removeAll(keepingCapacity: true)
        for source in owed where source.registration.removing && source.registration.pollArmed {
            removePoll(source, ring)
        }
    }

    func pollCompleted(_ completion: Ring.Completion, _ ring: Ring) {
        guard let source = polledSource(completion.userData) else { return }  // stale
        let more = completion.hasMore
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

    func deliverPollEvent(_ source: DispatchSource, revents: UInt32) {
        if let trace { traceSourceEvent(source, trace) }
        switch source.kind {
        case .read, .write, .pressureTrigger:
            source.post(1)
        case .process(_, let mask):
            if mask.contains(.exit) { source.post(DispatchSource.ProcessEvent.exit.rawValue) }
        case .fileSystem(let fd, let mask):
            // A refused read loses nothing: the events stay queued for the next one.
            let bits = (try? KernelWatches.takeFileChanges(source.registration.ownedFD)) ?? 0
            if bits == 0 { return }
            let events = fileSystemEvents(bits, fd: fd, source).intersection(mask)
            source.post(events.rawValue)
        default:
            break
        }
    }

    /// Translates inotify bits to Dispatch's file-system events, with fstat telling
    /// growth (`.extend`) and link changes (`.link`, `.delete` at zero links).
    func fileSystemEvents(_ bits: UInt32, fd: Int32, _ source: DispatchSource)
        -> DispatchSource.FileSystemEvent {
        var events: DispatchSource.FileSystemEvent = []
        let status = try? Descriptors.status(fd)
        let stated = status != nil
        let size = status?.size ?? 0, links = status?.links ?? 0
        if bits & KernelWatches.modified != 0 {
            events.insert(.write)
            if stated && size > source.registration.size { events.insert(.extend) }
        }
        if bits & KernelWatches.attributesChanged != 0 {
            if stated && links != source.registration.links {
                events.insert(.link)
                if links == 0 { events.insert(.delete) }
            } else {
                events.insert(.attrib)
            }
        }
        if bits & KernelWatches.deleted != 0 { events.insert(.delete) }
        if bits & KernelWatches.moved != 0 { events.insert(.rename) }
        if bits & KernelWatches.unmounted != 0 { events.insert(.revoke) }
        if stated {
            source.registration.size = size
            source.registration.links = links
        }
        return events
    }

    /// The trace's "source event" for a poll that completed (Observing, "The trace timeline").
    private func traceSourceEvent(_ source: DispatchSource, _ trace: TraceBuffer) {
        let kind: TraceSourceKind
        switch source.kind {
        case .write: kind = .write
        case .process: kind = .process
        case .fileSystem: kind = .fileSystem
        default: kind = .read
        }
        trace.record(.sourceEvent, aux: kind.rawValue, subject: UInt64(source.handle))
    }
}
