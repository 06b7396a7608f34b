import Synchronization

// Issuing requests and merging their completions (manager thread only).
//
// Files (`usesOffsets`): requests at explicit offsets, up to `depth` in flight; a
// short read or write leaves a hole that is requested again; reads are delivered
// in file order whatever order they complete in, and a read of 0 bytes marks the end.
// Streams (pipes, sockets): one request at a time at the file position; a short
// result is normal, and the next request continues after it.
//
// The descriptor is checked (device and inode) before a write or a pipe or socket
// read is issued, and when a read completes, so that a number closed and reused for
// another file is neither written nor read: the operation fails with EBADF.
extension IOEngine {
    /// Issues what `operation` may issue now; ends it when nothing is left.
    /// `checked`: the caller found the descriptor still naming its file just now.
    func pump(_ operation: IOOperation, _ ring: Ring, checked: Bool = false) {
        // A regular file's read is checked when it completes; writes and stream reads
        // (which take the bytes away from whoever reads that pipe now) before issuing.
        var checked = checked || !operation.isWrite && operation.channel.isRegularFile
        while !operation.issuingDone && !operation.stopped && operation.failure == 0 {
            if operation.usesOffsets ? operation.inFlight >= depth : operation.inFlight > 0 { break }
            guard let next = nextRequest(operation) else { break }
            if !checked {
                checked = true
                if !descriptorHolds(operation) {
                    operation.fail(Errno.badFile.rawValue, writtenBefore: next.dataIndex)
                    break
                }
            }
            guard let slot = freeSlots.last else {
                wait(operation)
                return
            }
            var buffer: UnsafeMutableRawPointer
            if operation.isWrite {
                buffer = operation.writePointer(at: next.dataIndex)
            } else {
                if !pool.reserve(next.length) {
                    if !(pool.waitForRelease(next.length) && pool.reserve(next.length)) {
                        wait(operation)
                        relieveBudget()
                        return
                    }
                }
                buffer = pool.take(capacity: next.length)
            }
            freeSlots.removeLast()
            generation &+= 1
            let entry = InFlight(operation: operation, generation: generation, buffer: buffer, capacity: next.length,
                                 length: next.length, offset: next.offset, dataIndex: next.dataIndex,
                                 ioprio: ioprioRefused ? 0 : operation.ioprio)
            slots[slot] = entry
            issue(entry, slot, ring)
            operation.inFlight += 1
            if next.fromHole { operation.holes.removeLast() }
            else if operation.usesOffsets {
                operation.requested += next.length
                operation.nextOffset += Int64(next.length)
            }
            let now = inFlightCount.load(ordering: .relaxed) + 1
            inFlightCount.store(now, ordering: .relaxed)
            if now > inFlightPeak.load(ordering: .relaxed) { inFlightPeak.store(now, ordering: .relaxed) }
        }
        finishIfDone(operation, ring)
    }

    /// The next request of `operation`: a hole first, then new bytes; nil when none.
    private func nextRequest(_ operation: IOOperation) -> (offset: Int64?, length: Int, dataIndex: Int, fromHole: Bool)? {
        if let hole = operation.holes.last {
            return (hole.offset, hole.length, hole.dataIndex, true)
        }
        if operation.eofAt != nil { return nil }
        let left = operation.length - operation.requested
        if left <= 0 { return nil }
        if operation.isWrite {
            let index = operation.requested
            let length = Swift.min(left, chunkBytes, operation.contiguousBytes(at: index))
            return (operation.usesOffsets ? operation.nextOffset : nil, length, index, false)
        }
        if operation.usesOffsets {
            let at = operation.nextOffset
            // No request may pass the largest offset (the kernel would answer EINVAL):
            // a read to the end that gets there has found the end.
            let room = Int64.max - at
            if room == 0 {
                operation.eofAt = Swift.min(operation.eofAt ?? Int64.max, at)
                return nil
            }
            let fits = room < Int64(chunkBytes) ? Int(room) : chunkBytes
            // Past the size the file had at start, one request at a time: a probe that
            // finds the end (0 bytes) or that the file grew.
            if at >= operation.sizeHint {
                return operation.inFlight > 0 ? nil : (at, Swift.min(left, fits), 0, false)
            }
            return (at, Swift.min(left, fits, Int(operation.sizeHint - at)), 0, false)
        }
        return (nil, Swift.min(left, streamChunkBytes), 0, false)
    }

    func issue(_ entry: InFlight, _ slot: Int, _ ring: Ring) {
        let data = userData(.io, entry.generation, slot)
        if !entry.operation.channel.isRegularFile { manager.armDescriptorWatch() }
        manager.trace?.record(.ioSubmitted, aux: entry.operation.isWrite ? 1 : 0,
                              subject: UInt64(bitPattern: Int64(entry.operation.channel.fileDescriptor)),
                              value: UInt64(entry.length))
        manager.retrying(ring) { () throws(Errno) in
            try ring.prepareTransfer(write: entry.operation.isWrite, fd: entry.operation.channel.fileDescriptor,
                                     buffer: entry.buffer.unsafelyUnwrapped, length: entry.length,
                                     offset: entry.offset, ioprio: entry.ioprio, userData: data)
        }
    }

    // MARK: Completions

    func completed(_ completion: Ring.Completion, _ ring: Ring) {
        let slot = Int(completion.userData & 0xFFFF_FFFF)
        let generation = UInt32((completion.userData >> 32) & 0xFF_FFFF)
        guard slot < slots.count, var entry = slots[slot], entry.generation & 0xFF_FFFF == generation else { return }
        let operation = entry.operation
        var result = completion.result
        var reissue = false
        var checked = false
        if entry.polling {
            // Readiness after EAGAIN: issue the transfer again (unless stopped).
            entry.polling = false
            reissue = result >= 0 || !operation.stopped && result != -Errno.cancelled.rawValue
        } else if result == -Errno.tryAgain.rawValue && !operation.stopped {
            // An O_NONBLOCK descriptor: io_uring answers EAGAIN instead of waiting.
            entry.polling = true
            slots[slot] = entry
            let events = operation.isWrite ? Descriptors.writable : Descriptors.readable
            manager.retrying(ring) { () throws(Errno) in
                try ring.preparePoll(fd: operation.channel.fileDescriptor, events: events, multishot: false,
                                     userData: userData(.ioPoll, entry.generation, slot))
            }
            return
        } else if (result == -Errno.interrupted.rawValue || result == -Errno.noMemory.rawValue
                    || result == -Errno.cancelled.rawValue) && !operation.stopped && entry.retries < Self.retryLimit {
            // Transient: the kernel was short of memory, a signal interrupted the
            // request, or something other than `.stop` cancelled it. Issue it again.
            entry.retries += 1
            reissue = true
        } else if (result == -Errno.notPermitted.rawValue || result == -Errno.invalidArgument.rawValue)
                    && entry.ioprio != 0 && !operation.stopped {
            // The kernel may refuse the I/O priority — or the file refuses the transfer
            // itself (an eventfd read of 4 bytes: EINVAL). Issued again without it, the
            // request tells which (below); only then do priorities go off for good.
            entry.ioprio = 0
            entry.ioprioProbe = true
            reissue = true
        } else if entry.ioprioProbe {
            // The request without its priority: EINVAL or EPERM again is the file's own
            // answer (the operation fails with it, priorities stay on); anything else
            // means the priority was what the kernel refused.
            entry.ioprioProbe = false
            if result != -Errno.notPermitted.rawValue && result != -Errno.invalidArgument.rawValue && !ioprioRefused {
                ioprioRefused = true
                ringletWarning("the kernel refused I/O priorities on \(manager.backend?.backend.description ?? "io_uring") requests (a "
                    + "\(operation.isWrite ? "write" : "read") on \(operation.channel.name) went through without one); "
                    + "DispatchIO requests go without them from now on")
            }
            if !operation.isWrite && result >= 0 && !operation.stopped {
                checked = descriptorHolds(operation)
                if !checked { result = -Errno.badFile.rawValue }
            }
        } else if !operation.isWrite && result >= 0 && !operation.stopped {
            // What a read brought back came from whatever file the number names now.
            checked = descriptorHolds(operation)
            if !checked { result = -Errno.badFile.rawValue }
        } else if result == -Errno.badFile.rawValue && !operation.stopped {
            // The number was closed under the request: said once per channel, as when
            // the watch finds it (`descriptorHolds` warns).
            _ = descriptorHolds(operation)
        }
        if reissue {
            slots[slot] = entry
            if !operation.isWrite && operation.channel.isRegularFile || descriptorHolds(operation) {
                issue(entry, slot, ring)
                return
            }
            result = -Errno.badFile.rawValue
        }
        manager.trace?.record(.ioCompleted, subject: UInt64(bitPattern: Int64(operation.channel.fileDescriptor)),
                              value: UInt64(bitPattern: Int64(result)))
        slots[slot] = nil
        freeSlots.append(slot)
        inFlightCount.store(inFlightCount.load(ordering: .relaxed) - 1, ordering: .relaxed)
        if inFlightCount.load(ordering: .relaxed) == 0 { manager.descriptorWatchMayStop() }
        operation.inFlight -= 1
        if operation.isWrite { wrote(entry, result) } else { read(entry, result) }
        pump(operation, ring, checked: checked)
        if !waiting.isEmpty { resume(ring) }
    }

    private func read(_ entry: InFlight, _ result: Int32) {
        let operation = entry.operation
        let buffer = entry.buffer.unsafelyUnwrapped
        if result <= 0 {
            pool.giveBack(buffer, capacity: entry.capacity)
            _ = pool.release(entry.length)  // the manager resumes its waiters itself
            if result < 0 {
                operation.fail(operation.stopped ? Errno.cancelled.rawValue : -result)
            } else if let offset = entry.offset {
                operation.eofAt = Swift.min(operation.eofAt ?? Int64.max, offset)
            } else {
                operation.eofAt = 0  // a stream's end
            }
            return
        }
        let count = Int(result)
        let region: DataRegion
        if count * 4 < entry.capacity {
            // Little came back (a pipe): keep a copy, not the whole buffer.
            region = DataRegion(storage: DataStorage(copying: UnsafeRawBufferPointer(start: buffer, count: count)),
                                start: 0, count: count)
            pool.giveBack(buffer, capacity: entry.capacity)
        } else {
            region = DataRegion(storage: DataStorage(base: buffer, capacity: entry.capacity, release: .pool(pool)),
                                start: 0, count: count)
        }
        _ = pool.release(entry.length - count)
        guard let offset = entry.offset else {
            operation.requested += count
            operation.append(region)
            // The class read ends once the pipe or socket has nothing more right now.
            if operation.endsWhenDrained {
                let ready = (try? Descriptors.readyEvents(operation.channel.fileDescriptor, Descriptors.readable)) ?? 0
                if ready & Descriptors.readable == 0 { operation.eofAt = 0 }
            }
            return
        }
        if count < entry.length {
            operation.holes.append((offset + Int64(count), entry.length - count, 0))
        }
        operation.insertPiece(offset: offset, region)
    }

    private func wrote(_ entry: InFlight, _ result: Int32) {
        let operation = entry.operation
        if result < 0 {
            // The write raised SIGPIPE in this thread, where it is blocked: take it, so
            // that it cannot reach the program later (through a signal source, say).
            if result == -brokenPipe { _ = SignalCalls.takePipeSignal() }
            operation.fail(operation.stopped ? Errno.cancelled.rawValue : -result, writtenBefore: entry.dataIndex)
            return
        }
        let count = Int(result)
        if count == 0 && entry.length > 0 {
            operation.fail(Errno.ioError.rawValue, writtenBefore: entry.dataIndex)  // would spin
            return
        }
        if let offset = entry.offset {
            if count < entry.length {
                operation.holes.append((offset + Int64(count), entry.length - count, entry.dataIndex + count))
            }
        } else {
            operation.requested += count
        }
    }

    // MARK: Ending

    /// Ends `operation` once no request is in flight and nothing is left to issue.
    func finishIfDone(_ operation: IOOperation, _ ring: Ring) {
        guard !operation.issuingDone, operation.inFlight == 0, !operation.waitingForResources else { return }
        let failed = operation.failure != 0 || operation.stopped
        if !failed {
            if !operation.holes.isEmpty { return }
            if operation.eofAt == nil && operation.requested < operation.length { return }
        }
        operation.issuingDone = true
        disarmInterval(operation)
        forgetLowWater(operation)
        let error = operation.failure != 0 ? operation.failure : (operation.stopped ? Errno.cancelled.rawValue : 0)
        let channel = operation.channel
        if operation.positioned && error != Errno.badFile.rawValue {
            // Before the done handler can run: the descriptor's position moves past what
            // was read or written, as read(2) and write(2) would leave it (not when the
            // number was closed: it may name another file now).
            try? Descriptors.seek(channel.fileDescriptor, to: operation.isWrite ? operation.nextOffset : operation.deliverOffset)
        }
        if operation.isWrite {
            operation.finishWrite(unwrittenFrom: operation.firstUnwritten, error: error)
        } else {
            // Pieces after a gap that will never be filled are dropped with the error.
            let dropped = operation.dropPieces()
            _ = pool.release(dropped)
            operation.finish(error: error)
        }
        if channel.type == .stream { leaveLane(operation, ring) }
    }
}

/// EPIPE: the reader of a pipe or socket has gone.
private let brokenPipe: Int32 = 32
