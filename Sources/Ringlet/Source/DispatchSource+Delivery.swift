import CRinglet
import Synchronization

// Delivery: how an event reaches the event handler.
//
// Every event merges into `pending` and then tries to set `deliveryQueued`. Whoever
// sets it owns `spare`, the source's one delivery node, and pushes it to the source's
// queue; every other event only merges. The delivery, on the queue, first takes a
// new spare node (waiting for the pool there is allowed), clears `deliveryQueued`,
// then takes what is pending and runs the handler with it. So at most one delivery is
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
        case .dataOr, .read, .write, .process, .fileSystem:
            if value == 0 { return }
            pending.bitwiseOr(value, ordering: .acquiringAndReleasing)
        }
        guard deliveryQueued.compareExchange(expected: false, desired: true,
                                             ordering: .acquiringAndReleasing).exchanged else { return }
        guard let node = spare else { ringletBug("\(name) has no delivery node while one is owed") }
        spare = nil
        enqueue(node)
    }

    /// Runs on the source's queue: the event handler, with what is pending as `data`.
    func deliver() {
        if finished.load(ordering: .acquiring) { return }
        spare = makeNode { [self] in deliver() }
        deliveryQueued.store(false, ordering: .releasing)
        let value = pending.exchange(0, ordering: .acquiringAndReleasing)
        if value == 0 || isCancelled { return }
        currentData.store(estimate(value), ordering: .relaxed)
        lock.withLock { eventHandler }?.run()
        recheckReadiness()
    }

    /// `data` for the handler: read and write sources report bytes, not readiness.
    private func estimate(_ value: UInt) -> UInt {
        switch kind {
        case .read(let fd):
            let bytes = rl_fd_readable_bytes(fd)
            return bytes >= 0 ? UInt(bytes) : 1
        case .write(let fd):
            let bytes = rl_fd_writable_bytes(fd)
            return bytes >= 0 ? UInt(bytes) : 1
        default:
            return value
        }
    }

    /// Read and write sources are level-triggered, as in GCD: while the descriptor
    /// stays ready after the handler (data left unread, EOF), the handler runs again.
    private func recheckReadiness() {
        let fd: Int32, events: UInt32
        switch kind {
        case .read(let descriptor): (fd, events) = (descriptor, RL_POLLIN)
        case .write(let descriptor): (fd, events) = (descriptor, RL_POLLOUT)
        default: return
        }
        if isCancelled { return }
        let ready = rl_fd_poll_now(fd, events)
        if ready > 0 && UInt32(ready) & 0x20 != 0 {  // POLLNVAL: closed under the source
            ringletWarning("fd \(fd) was closed while its \(name) was active; cancelling the source. Close the "
                + "descriptor in the source's cancel handler instead")
            cancel()
        } else if ready > 0 {
            post(1)
        }
    }
}
