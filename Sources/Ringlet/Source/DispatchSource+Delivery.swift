import Synchronization

// Delivery: how an event reaches the event handler.
//
// Every event merges into `pending` and then tries to set `deliveryQueued`. Whoever
// sets it owns `spare`, the source's one delivery node, and pushes it to the source's
// queue; every other event only merges. The delivery, on the queue, makes its node
// the spare again (the drainer no longer touches it), clears `deliveryQueued`, then
// takes what is pending and runs the handler with it. So at most one delivery is
// queued, events in between coalesce into `data`, and none is lost: an event that
// merges after the delivery took `pending` finds `deliveryQueued` clear and queues
// the next one.
extension DispatchSource {
    /// Merges a user-data value (any thread; no manager hop). Traps on other kinds.
    func merge(_ value: UInt) {
        switch kind {
        case .dataAdd, .dataOr, .dataReplace: break
        default:
            ringletMisuse("add/or/replace(data:) on \(name): only user-data sources take data from the program")
        }
        if isCancelled { return }
        post(value)
    }

    /// Merges an event by the source's rule and queues a delivery if none is queued.
    /// Any thread; never waits. 0 is no event.
    func post(_ value: UInt) {
        switch kind {
        case .dataReplace:
            pending.store(value, ordering: .releasing)
            if value == 0 { return }
        case .timer, .dataAdd, .signal:
            if value == 0 { return }
            pending.wrappingAdd(value, ordering: .acquiringAndReleasing)
        case .dataOr, .read, .write, .process, .fileSystem, .memoryPressure, .pressureTrigger:
            if value == 0 { return }
            pending.bitwiseOr(value, ordering: .acquiringAndReleasing)
        }
        queueDelivery()
    }

    /// Data merged while the source was inactive is delivered on activation, as in GCD.
    func deliverPendingData() {
        if pending.load(ordering: .acquiring) != 0 { queueDelivery() }
    }

    /// Queues the delivery unless one is queued (then what was merged rides on it).
    private func queueDelivery() {
        guard deliveryQueued.compareExchange(expected: false, desired: true,
                                             ordering: .acquiringAndReleasing).exchanged else { return }
        guard let node = spare else { ringletBug("\(name) has no delivery node while one is owed") }
        spare = nil
        enqueue(node)
    }

    /// Runs on the source's queue from the delivery node `node`: the event handler,
    /// with what is pending as `data`.
    func deliver(_ node: WorkNodeRef) {
        if finished.load(ordering: .acquiring) {
            // Queued before the cancellation finished: the last use of the node.
            node.deinitialize(count: 1)
            return
        }
        spare = node
        deliveryQueued.store(false, ordering: .releasing)
        let value = pending.exchange(0, ordering: .acquiringAndReleasing)
        if isCancelled { return }
        if value == 0 {
            rearmPollIfOwed()
            return
        }
        if !descriptorStillNamesItsFile() { return }
        // After taking `pending`: a staged fire in `value` has its deadline visible.
        if case .timer = kind { waitForStagedDeadline() }
        currentData.store(estimate(value), ordering: .relaxed)
        // One look under the lock for both: this runs for every delivery.
        #if canImport(_Concurrency)
        let (stream, handler) = lock.withLock { (eventStream, eventHandler) }
        if let stream {
            // A task iterates the events: it gets the value. Read and write sources
            // check readiness again when it asks for the next one (`eventsConsumed`).
            stream.offer(currentData.load(ordering: .relaxed))
            return
        }
        #else
        let handler = lock.withLock { eventHandler }
        #endif
        guard let handler else {
            // No handler: nothing drains the descriptor, so no level-triggered re-run
            // (it would spin); the next edge re-arms the poll.
            rearmPollIfOwed()
            return
        }
        handler.run()
        readinessAfterHandler()
    }

    /// After a handler (or an events iterator's element): a read or write source
    /// still ready gets another delivery, else its poll is re-armed if it ended.
    func readinessAfterHandler() {
        if !recheckReadiness() { rearmPollIfOwed() }
    }

    /// A poll that ended on a ready descriptor is armed again once the handler has
    /// run (while the descriptor stays ready, `recheckReadiness` queues the next
    /// delivery, which re-arms it in turn).
    private func rearmPollIfOwed() {
        if pollRearmOwed.exchange(false, ordering: .acquiringAndReleasing) && !isCancelled {
            manager.submit(.rearmPoll(self))
        }
    }

    /// (device, inode) of the fd of a read, write or file-system source; nil for
    /// other kinds.
    static func identity(of kind: Kind) -> (device: UInt64, inode: UInt64)? {
        let fd: Int32
        switch kind {
        case .read(let descriptor), .write(let descriptor), .fileSystem(let descriptor, _): fd = descriptor
        default: return nil
        }
        return Descriptors.identity(fd)
    }

    /// False, after a warning and `cancel()`, when the fd was closed (and maybe
    /// reused for another file) while the source was active: the kernel's poll still
    /// watches the old file, and the handler would act on the new owner of the number.
    func descriptorStillNamesItsFile() -> Bool {
        guard let expected = descriptorIdentity else { return true }
        if let now = Self.identity(of: kind), now == expected { return true }
        ringletWarning("\(name): fd \(handle) was closed (or now names another file) while the source was active; "
            + "cancelling the source. Close the descriptor in the source's cancel handler instead")
        cancel()
        return false
    }

    /// `data` for the handler: read and write sources report bytes, not readiness.
    private func estimate(_ value: UInt) -> UInt {
        switch kind {
        case .read(let fd):
            return (try? Descriptors.readableBytes(fd)).map { UInt($0) } ?? 1
        case .write(let fd):
            return (try? Descriptors.writableBytes(fd)).map { UInt($0) } ?? 1
        default:
            return value
        }
    }

    /// Read and write sources are level-triggered, as in GCD: while the descriptor
    /// stays ready after the handler (data left unread, EOF), the handler runs again.
    /// Returns whether it queued another delivery.
    private func recheckReadiness() -> Bool {
        let fd: Int32, events: UInt32
        switch kind {
        case .read(let descriptor): (fd, events) = (descriptor, Descriptors.readable)
        case .write(let descriptor): (fd, events) = (descriptor, Descriptors.writable)
        default: return false
        }
        if isCancelled { return false }
        // A refused poll counts as not ready: the next edge re-arms the source's poll.
        let ready = (try? Descriptors.readyEvents(fd, events)) ?? 0
        if ready & Descriptors.notOpen != 0 {  // closed under the source
            ringletWarning("fd \(fd) was closed while its \(name) was active; cancelling the source. Close the "
                + "descriptor in the source's cancel handler instead")
            cancel()
        } else if ready > 0 {
            post(1)
            return true
        }
        return false
    }
}
