import CRinglet
import Synchronization

/// The manager thread's side of DispatchIO: it issues the reads and writes of every
/// channel on the ring, merges their results into their operations and decides when
/// an operation is done. Everything here runs on the manager thread except the three
/// entry points marked "any thread", which only post requests.
///
/// Bounds (Architecture, "Fixed at start"): at most `ioRequests` requests in flight in the
/// process, `ioQueueDepth` per operation, and `ioBufferBytes` of read buffers held.
/// An operation that meets a bound waits in `waiting` and is pumped again when a
/// request completes or a handler gives bytes back.
///
/// A request's user data is tag | generation (24 bits) | slot (32 bits), so the
/// completion of a cancelled or reused slot is recognised and dropped.
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

    /// A handler returned `bytes` of read data to the budget.
    func releaseBudget(_ bytes: Int) {
        if pool.release(bytes) { manager.submit(.run { [self] in resume($0) }) }
    }

    // MARK: Starting and stopping (manager)

    func start(_ operation: IOOperation, _ ring: Ring) {
        let channel = operation.channel
        if channel.stopped {
            end(operation, error: Errno.cancelled.rawValue)
            return
        }
        if channel.type == .stream {
            let direction = operation.isWrite ? 1 : 0
            if channel.activeStream[direction] != nil {
                channel.waitingStream[direction].append(operation)
                return
            }
            channel.activeStream[direction] = operation
        }
        if operation.usesOffsets && operation.startOffset == nil {
            operation.nextOffset = channel.streamPosition
            operation.deliverOffset = channel.streamPosition
        }
        // The size hint matters only to a read of several requests; a one-request read
        // (4 KiB at random) costs the manager no fstat.
        if !operation.isWrite && operation.usesOffsets && operation.length > chunkBytes {
            var size: Int64 = 0, links: Int64 = 0
            if rl_fd_stat(channel.fileDescriptor, &size, &links) == 0 { operation.sizeHint = size }
        }
        if !operation.isWrite {
            let interval = channel.intervalSetting
            if interval.nanoseconds > 0 { armInterval(operation, interval) }
        }
        pump(operation, ring)
    }

    /// `.stop`: cancels every request of `channel` and ends its operations with ECANCELED.
    func stop(_ channel: DispatchIO, _ ring: Ring) {
        channel.stopped = true
        for direction in 0..<2 {
            let queued = channel.waitingStream[direction]
            channel.waitingStream[direction] = []
            queued.forEach { end($0, error: Errno.cancelled.rawValue) }
        }
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
        for direction in 0..<2 {
            if let active = channel.activeStream[direction], active.inFlight == 0, !active.issuingDone {
                active.stopped = true
                finishIfDone(active, ring)
            }
        }
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

    /// Ends an operation that never issued a request.
    private func end(_ operation: IOOperation, error: Int32) {
        operation.issuingDone = true
        if operation.isWrite { operation.finishWrite(unwrittenFrom: 0, error: error) }
        else { operation.finish(error: error) }
    }

    private func armInterval(_ operation: IOOperation, _ interval: (nanoseconds: UInt64, strict: Bool)) {
        let leeway = interval.strict ? 0 : interval.nanoseconds / 10
        manager.armTimer(deadline: MonotonicClock.nanoseconds &+ interval.nanoseconds, wall: false, interval: 0,
                         leeway: leeway, owner: .action({ [self] in
            if operation.issuingDone { return }
            operation.intervalElapsed()
            armInterval(operation, interval)
        }))
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
