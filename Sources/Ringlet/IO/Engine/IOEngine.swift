import Synchronization

/// The manager thread's side of DispatchIO: it issues the reads and writes of every
/// channel on the ring, merges their results into their operations and decides when
/// an operation is done. Everything here runs on the manager thread except the three
/// entry points marked "any thread", which only post requests.
///
/// Bounds (Architecture, "Fixed at start"): at most `ioRequests` requests in flight in the
/// process, `ioQueueDepth` per operation, and `ioBufferBytes` of read buffers held.
/// An operation that meets a bound waits in `waiting` and is pumped again when a
/// request completes or a handler gives bytes back. When the buffers are spent,
/// reads holding bytes below their low water hand them over (`relieveBudget`), so a
/// low water can slow its own channel but never stall another.
///
/// `.stream` operations of every channel on one descriptor take turns in that
/// descriptor's lanes (IOEngine+Descriptors.swift), as libdispatch's fd entries do.
/// A descriptor closed and reused for another file fails its operations with EBADF.
///
/// A request's user data is tag | generation (24 bits) | slot (32 bits), so the
/// completion of a cancelled or reused slot is recognised and dropped.
// @unchecked Sendable: its state is the manager thread's; other threads only post requests (RequestStack).
final class IOEngine: @unchecked Sendable {
    /// One request on the ring.
    struct InFlight {
        let operation: IOOperation
        let generation: UInt32
        var buffer: UnsafeMutableRawPointer?   // reads: the buffer; writes: into the data
        let capacity: Int                      // reads: the buffer's size
        let length: Int
        let offset: Int64?
        let dataIndex: Int                     // writes: where the bytes start in the data
        var ioprio: UInt16
        var polling = false                    // waiting for readiness after EAGAIN
        var retries = 0                        // transient errors in a row
        /// Issued again without its I/O priority after EINVAL or EPERM: its result says
        /// whether the priority was what the kernel refused (`ioprioRefused`).
        var ioprioProbe = false
    }

    /// Transient errors (ENOMEM, ECANCELED not asked for) a request is re-issued
    /// after, in a row, before the operation fails with the error.
    static let retryLimit = 8

    let pool: IOBufferPool
    let depth: Int
    let chunkBytes: Int
    /// Pipes and sockets: a read rarely returns more than a pipe holds (64 KiB).
    let streamChunkBytes: Int
    unowned(unsafe) var manager: ManagerThread!
    var slots: [InFlight?]
    var freeSlots: [Int]
    var generation: UInt32 = 0
    var waiting: [IOOperation] = []
    /// The `.stream` operations under way and waiting, per descriptor number, sorted
    /// by it (a binary search: a Dictionary's hashing would pull libm into Embedded
    /// builds). Only descriptors with such operations have an entry.
    var lanes: [DescriptorLanes] = []
    /// Reads under way with a low water above 1 byte (see `relieveBudget`).
    var lowWaterReaders: [IOOperation] = []
    /// SIGPIPE is blocked on the manager thread (done by the first write).
    var pipeSignalBlocked = false
    var ioprioRefused = false
    // Statistics: written by the manager only, read by any thread.
    let inFlightCount = Atomic<Int>(0)
    let inFlightPeak = Atomic<Int>(0)

    init(configuration: RuntimeConfiguration) {
        pool = IOBufferPool(chunkBytes: configuration.ioChunkBytes, budget: configuration.ioBufferBytes)
        depth = configuration.ioQueueDepth
        chunkBytes = configuration.ioChunkBytes
        streamChunkBytes = Swift.min(configuration.ioChunkBytes, 64 * 1024)
        slots = Array(repeating: nil, count: configuration.ioRequests)
        freeSlots = Array((0..<configuration.ioRequests).reversed())
    }

    /// (requests in flight now, most at once since start)
    var counters: (inFlight: Int, peak: Int) {
        (inFlightCount.load(ordering: .relaxed), inFlightPeak.load(ordering: .relaxed))
    }

    // MARK: Any thread

    // Each posts a closure the manager runs (ManagerThread.Request.run): the manager
    // itself never names the engine's methods.

    func submit(_ operation: IOOperation) { manager.submit(.run { [self] in start(operation, $0) }) }

    func stop(_ channel: DispatchIO) { manager.submit(.run { [self] in stop(channel, $0) }) }

    /// Ends one operation early, as `.stop` ends a channel's (an awaiting task was
    /// cancelled: DispatchIO+Async.swift). Its done handler still runs, once, with ECANCELED.
    func cancel(_ operation: IOOperation) { manager.submit(.run { [self] in cancel(operation, $0) }) }

    /// A handler returned `bytes` of read data to the budget.
    func releaseBudget(_ bytes: Int) {
        if pool.release(bytes) { manager.submit(.run { [self] in resume($0) }) }
    }

    // MARK: Starting and stopping (manager)

    func start(_ operation: IOOperation, _ ring: Ring) {
        let channel = operation.channel
        operation.started = true
        // `stopped` already: cancelled before its start reached the manager (`cancel`).
        if channel.stopped || operation.stopped {
            end(operation, error: Errno.cancelled.rawValue)
            return
        }
        if operation.isWrite && !pipeSignalBlocked {
            // A write to a pipe or socket whose reader has gone raises SIGPIPE in the
            // thread that issued it: this one. Blocked, it leaves EPIPE in the
            // completion instead of ending the process (`wrote` takes the signal).
            pipeSignalBlocked = true
            SignalCalls.blockPipeSignal()
        }
        if channel.type == .stream && !enterLane(operation) { return }  // waits for its turn
        begin(operation, ring)
    }

    /// Starts an operation whose turn it is (a `.stream` one is its lane's active one).
    func begin(_ operation: IOOperation, _ ring: Ring) {
        let channel = operation.channel
        if channel.stopped { operation.stopped = true }
        if operation.usesOffsets && operation.startOffset == nil && !operation.stopped {
            // `.stream` on a file: from the descriptor's position, as read(2) and write(2) go.
            do throws(Errno) {
                let position = try Descriptors.position(channel.fileDescriptor)
                if !IOOperation.rangeFits(start: position, length: operation.length, isWrite: operation.isWrite) {
                    operation.fail(Errno.invalidArgument.rawValue)  // it would pass the largest offset
                } else {
                    operation.positioned = true
                    operation.nextOffset = position
                    operation.deliverOffset = position
                }
            } catch {
                operation.fail(error.rawValue)
            }
        }
        if operation.stopped || operation.failure != 0 {
            finishIfDone(operation, ring)
            return
        }
        // The size hint matters only to a read of several requests; a one-request read
        // (4 KiB at random) costs the manager no fstat.
        if !operation.isWrite && operation.usesOffsets && operation.length > chunkBytes {
            if let status = try? Descriptors.status(channel.fileDescriptor) { operation.sizeHint = status.size }
        }
        if !operation.isWrite {
            if operation.lowWater > 1 { lowWaterReaders.append(operation) }
            let interval = channel.intervalSetting
            if interval.nanoseconds > 0 { armInterval(operation, interval) }
        }
        pump(operation, ring)
    }

    /// `.stop`: cancels every request of `channel` and ends its operations with ECANCELED.
    func stop(_ channel: DispatchIO, _ ring: Ring) {
        channel.stopped = true
        let queued = dropWaitingTurns(of: channel)
        queued.forEach { end($0, error: Errno.cancelled.rawValue) }
        for (slot, entry) in slots.enumerated() {
            guard let entry, entry.operation.channel === channel else { continue }
            entry.operation.stopped = true
            let tag: ManagerThread.Tag = entry.polling ? .ioPoll : .io
            manager.retrying(ring) { () throws(Errno) in
                try ring.prepareCancel(target: userData(tag, entry.generation, slot),
                                       userData: userData(.ioCancel, 0, 0))
            }
        }
        let stalled = waiting.filter { $0.channel === channel }
        waiting.removeAll { $0.channel === channel }
        for operation in stalled {
            operation.waitingForResources = false
            operation.stopped = true
            finishIfDone(operation, ring)
        }
        for active in activeTurns(of: channel) where active.inFlight == 0 && !active.issuingDone {
            active.stopped = true
            finishIfDone(active, ring)
        }
    }

    /// Ends `operation` alone with ECANCELED: out of its lane's queue if it waits for
    /// its turn, its requests cancelled on the ring if it has some in flight (it ends
    /// when they are back), at once otherwise. An operation not started yet (its
    /// start request comes after this one, or a barrier holds it) ends at its start:
    /// the channel counts a held operation as running only once it is released.
    func cancel(_ operation: IOOperation, _ ring: Ring) {
        if operation.issuingDone || operation.stopped { return }
        operation.stopped = true
        if !operation.started { return }
        if dropWaitingTurn(operation) {
            end(operation, error: Errno.cancelled.rawValue)
            return
        }
        for (slot, entry) in slots.enumerated() {
            guard let entry, entry.operation === operation else { continue }
            let tag: ManagerThread.Tag = entry.polling ? .ioPoll : .io
            manager.retrying(ring) { () throws(Errno) in
                try ring.prepareCancel(target: userData(tag, entry.generation, slot),
                                       userData: userData(.ioCancel, 0, 0))
            }
        }
        if operation.waitingForResources {
            waiting.removeAll { $0 === operation }
            operation.waitingForResources = false
        }
        finishIfDone(operation, ring)  // nothing in flight: ends now; else when the last request is back
    }

    /// Budget came back: pump the operations that waited for it.
    func resume(_ ring: Ring) {
        if waiting.isEmpty { return }
        let stalled = waiting
        waiting = []
        for operation in stalled {
            operation.waitingForResources = false
            pump(operation, ring)
        }
    }

    /// Ends an operation that never issued a request (nor took a lane).
    private func end(_ operation: IOOperation, error: Int32) {
        operation.issuingDone = true
        disarmInterval(operation)
        if operation.isWrite { operation.finishWrite(unwrittenFrom: 0, error: error) }
        else { operation.finish(error: error) }
    }

    /// Arms the next interval of a read; `disarmInterval` removes it when the read
    /// ends, so the timer neither wakes the manager nor keeps the channel alive.
    private func armInterval(_ operation: IOOperation, _ interval: (nanoseconds: UInt64, strict: Bool)) {
        let leeway = interval.strict ? 0 : interval.nanoseconds / 10
        // No overflow: the interval is at most Int64.max (`.never`) and the clock far below 2^63.
        operation.intervalTimer = manager.armTimer(deadline: MonotonicClock.nanoseconds + interval.nanoseconds,
                                                   wall: false, interval: 0, leeway: leeway, owner: .action({ [self] in
            operation.intervalTimer = nil  // fired: a one-shot is gone
            if operation.issuingDone { return }
            operation.deliverPending()
            armInterval(operation, interval)
        }))
    }

    /// Removes a read's interval timer (its action holds the operation and channel).
    func disarmInterval(_ operation: IOOperation) {
        guard let handle = operation.intervalTimer else { return }
        operation.intervalTimer = nil
        manager.disarmTimer(handle)
    }

    func userData(_ tag: ManagerThread.Tag, _ generation: UInt32, _ slot: Int) -> UInt64 {
        tag.rawValue << 56 | UInt64(generation & 0xFF_FFFF) << 32 | UInt64(UInt32(truncatingIfNeeded: slot))
    }

    func wait(_ operation: IOOperation) {
        if operation.waitingForResources { return }
        operation.waitingForResources = true
        waiting.append(operation)
    }
}
