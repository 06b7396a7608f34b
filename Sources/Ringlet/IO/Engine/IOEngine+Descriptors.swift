
/// What the channels on one descriptor number share (manager thread only), as
/// libdispatch's "fd entry": the `.stream` operation under way in each lane and the
/// ones waiting for their turn, whichever channel (or class function) made them.
///
/// On a regular file reads and writes share one lane, because they share the
/// descriptor's position: each takes it at start and leaves it after its bytes, so
/// concurrent `DispatchIO.write(toFileDescriptor:)` calls append whole records. On a
/// pipe or socket reads and writes have a lane each and proceed at once (a read
/// waiting for a reply must not hold back the write that asks for it).
final class DescriptorLanes {
    let fd: Int32
    var active: [IOOperation?] = [nil, nil]
    var waiting: [[IOOperation]] = [[], []]
    /// `leaveLane` is starting the next operations (one that ends at once must not
    /// start its successor itself: the loop does, without recursion).
    var advancing = false

    init(fd: Int32) { self.fd = fd }

    var idle: Bool { active[0] == nil && active[1] == nil && waiting[0].isEmpty && waiting[1].isEmpty }
}

// Lanes, descriptor checks and the buffer budget's relief (manager thread only).
extension IOEngine {
    // MARK: Lanes

    private func lane(of operation: IOOperation) -> Int {
        operation.channel.isRegularFile || !operation.isWrite ? 0 : 1
    }

    /// Where `fd`'s entry is in `lanes`, or where it would go.
    private func lanesIndex(_ fd: Int32) -> (found: Bool, index: Int) {
        var low = 0, high = lanes.count
        while low < high {
            let middle = (low + high) / 2
            if lanes[middle].fd < fd { low = middle + 1 } else { high = middle }
        }
        return (low < lanes.count && lanes[low].fd == fd, low)
    }

    private func existingLanes(_ fd: Int32) -> DescriptorLanes? {
        let (found, index) = lanesIndex(fd)
        return found ? lanes[index] : nil
    }

    /// Drops `entry` once nothing is under way or waiting on its descriptor.
    private func dropIfIdle(_ entry: DescriptorLanes) {
        guard entry.idle else { return }
        let (found, index) = lanesIndex(entry.fd)
        if found { lanes.remove(at: index) }
    }

    /// Makes a `.stream` operation its lane's active one, or queues it behind the
    /// active one. True when it may begin now.
    func enterLane(_ operation: IOOperation) -> Bool {
        let fd = operation.channel.fileDescriptor
        let (found, index) = lanesIndex(fd)
        let entry: DescriptorLanes
        if found {
            entry = lanes[index]
        } else {
            entry = DescriptorLanes(fd: fd)
            lanes.insert(entry, at: index)
        }
        let lane = lane(of: operation)
        if entry.active[lane] != nil {
            entry.waiting[lane].append(operation)
            return false
        }
        entry.active[lane] = operation
        return true
    }

    /// A `.stream` operation ended: the next one in its lane begins.
    func leaveLane(_ operation: IOOperation, _ ring: Ring) {
        guard let entry = existingLanes(operation.channel.fileDescriptor) else { return }
        let lane = lane(of: operation)
        guard entry.active[lane] === operation else { return }
        entry.active[lane] = nil
        if entry.advancing { return }
        entry.advancing = true
        while entry.active[lane] == nil && !entry.waiting[lane].isEmpty {
            let next = entry.waiting[lane].removeFirst()
            entry.active[lane] = next
            begin(next, ring)  // may end `next` at once (then the loop goes on)
        }
        entry.advancing = false
        dropIfIdle(entry)
    }

    /// Takes `channel`'s operations that wait for their turn out of the lanes.
    func dropWaitingTurns(of channel: DispatchIO) -> [IOOperation] {
        guard let entry = existingLanes(channel.fileDescriptor) else { return [] }
        var dropped: [IOOperation] = []
        for lane in 0..<2 {
            dropped += entry.waiting[lane].filter { $0.channel === channel }
            entry.waiting[lane].removeAll { $0.channel === channel }
        }
        dropIfIdle(entry)
        return dropped
    }

    /// Takes `operation` out of its lane's queue; false when it is not waiting there.
    func dropWaitingTurn(_ operation: IOOperation) -> Bool {
        guard operation.channel.type == .stream,
              let entry = existingLanes(operation.channel.fileDescriptor) else { return false }
        let lane = lane(of: operation)
        guard let index = entry.waiting[lane].firstIndex(where: { $0 === operation }) else { return false }
        entry.waiting[lane].remove(at: index)
        dropIfIdle(entry)
        return true
    }

    /// `channel`'s operations active in the lanes.
    func activeTurns(of channel: DispatchIO) -> [IOOperation] {
        guard let entry = existingLanes(channel.fileDescriptor) else { return [] }
        return entry.active.compactMap { $0 }.filter { $0.channel === channel }
    }

    // MARK: A descriptor closed and reused

    /// Whether the operation's descriptor still names the file its channel was made
    /// on (one fstat(2)). False, after one warning per channel, when the number was
    /// closed — and maybe reused for another file, whose bytes must not be read or
    /// overwritten: the caller fails the operation with EBADF, as a closed fd does.
    func descriptorHolds(_ operation: IOOperation) -> Bool {
        let channel = operation.channel
        if channel.descriptor.stillNamesItsFile { return true }
        if !channel.reuseWarned {
            channel.reuseWarned = true
            ringletWarning("\(channel.name): fd \(channel.fileDescriptor) was closed (or now names another file) "
                + "while an operation was under way; it fails with EBADF. Close the descriptor in the channel's "
                + "cleanup handler instead")
        }
        return false
    }

    /// The descriptor watch's look (ManagerThread+DescriptorWatch.swift): an operation
    /// under way on a pipe, socket or terminal whose descriptor no longer names its
    /// file ends with EBADF (and the warning): its requests are cancelled, so the ring
    /// lets go of the old file. Returns whether any such operation is still watched.
    func checkDescriptors(_ ring: Ring) -> Bool {
        var watching = false
        var lost: [IOOperation] = []
        for case let entry? in slots {
            let operation = entry.operation
            if operation.channel.isRegularFile || operation.stopped || operation.issuingDone { continue }
            if lost.contains(where: { $0 === operation }) { continue }
            if descriptorHolds(operation) { watching = true } else { lost.append(operation) }
        }
        for operation in lost {
            operation.fail(Errno.badFile.rawValue)
            cancel(operation, ring)
        }
        return watching
    }

    // MARK: The buffer budget

    /// The read buffers are spent: reads holding bytes below their low water hand
    /// them over, so that the budget comes back when their handlers return. Without
    /// this, channels each holding part of the budget below their low water would
    /// wait for one another for ever, and stall every other channel's reads too.
    func relieveBudget() {
        for operation in lowWaterReaders { operation.deliverPending() }
    }

    /// A read ended: it no longer holds bytes below a low water.
    func forgetLowWater(_ operation: IOOperation) {
        if operation.isWrite || operation.lowWater <= 1 { return }
        lowWaterReaders.removeAll { $0 === operation }
    }
}
