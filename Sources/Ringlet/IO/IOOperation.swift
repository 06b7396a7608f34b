import Synchronization

/// One `read` or `write` of a channel, from the call to its last handler.
///
/// The manager issues its requests and merges their results (`IOEngine`); the
/// fields marked "manager" belong to the manager thread. What the handler receives
/// passes through `pending` under `lock`, and reaches the handler's queue through one
/// delivery node at a time, so the handler of an operation never runs concurrently
/// with itself, even on a concurrent queue. A `.stream` operation may first wait for
/// its turn on the descriptor (IOEngine+Descriptors.swift).
///
///   queued --(1) start--> issuing --(2) last request done--> delivering --(3) done handler--> finished
///
///   (1) IOEngine.start / begin   (2) IOEngine.finishIfDone   (3) IOOperation.deliver
// @unchecked Sendable: "manager" fields are the manager thread's; `pending` & co. under `lock`.
final class IOOperation: @unchecked Sendable {
    typealias Handler = (_ done: Bool, _ data: DispatchData?, _ error: Int32) -> Void

    let channel: DispatchIO
    let isWrite: Bool
    let handlerQueue: DispatchQueue
    let handler: Handler
    /// The QoS the handler runs at, and the I/O priority of the requests.
    let priority: QoSPriority
    let ioprio: UInt16
    let lowWater: Int
    let highWater: Int
    /// Where the operation starts: a file offset, or nil for a stream (pipe, socket).
    let startOffset: Int64?
    /// Bytes to read (Int.max: to the end) or to write.
    let length: Int
    /// What a write writes.
    let writeData: DispatchData
    /// Requests take file offsets (regular files, except writes to O_APPEND files).
    let usesOffsets: Bool
    /// A stream read that ends once it has data and the descriptor has no more (the
    /// class read: libdispatch completes its convenience read on EAGAIN).
    let endsWhenDrained: Bool

    // Manager:
    var nextOffset: Int64 = 0        // the next byte to request (files)
    var requested = 0                // bytes requested so far (or written, for streams)
    var inFlight = 0
    var deliverOffset: Int64 = 0     // reads of files: results are delivered in this order
    var pieces: [(offset: Int64, region: DataRegion)] = []   // read out of order, by offset
    /// Short reads and writes left to redo: file offset, length, index in the write data.
    var holes: [(offset: Int64, length: Int, dataIndex: Int)] = []
    /// The file's size at start: past it, one request at a time (a probe for growth).
    var sizeHint: Int64 = Int64.max
    /// Writes: the lowest data index a failed request covered.
    var failedAt: Int?
    var eofAt: Int64?
    var failure: Int32 = 0
    var stopped = false
    /// `IOEngine.start` has seen it (a cancel before that leaves the ending to it).
    var started = false
    var issuingDone = false
    var waitingForResources = false
    /// For streams: the bytes still to write start here in `writeData`.
    var writeCursor = 0
    /// A `.stream` operation on a file took the descriptor's position at start (and
    /// moves it past what it read or wrote at the end).
    var positioned = false
    /// The interval timer armed for this read, disarmed when it ends.
    var intervalTimer: TimerQueue.Handle?

    private let lock = FutexLock()
    // Under `lock`:
    private var pending = DispatchData.empty
    private var done = false
    private var doneError: Int32 = 0
    private var deliveryQueued = false
    private var forceDelivery = false
    /// The node the next delivery runs on; belongs to whoever set `deliveryQueued`.
    private var spare: WorkNodeRef?

    init(channel: DispatchIO, isWrite: Bool, startOffset: Int64?, length: Int, writeData: DispatchData,
         queue: DispatchQueue, limits: (low: Int, high: Int), endsWhenDrained: Bool, handler: @escaping Handler) {
        self.channel = channel
        self.endsWhenDrained = endsWhenDrained
        self.isWrite = isWrite
        self.startOffset = startOffset
        self.length = length
        self.writeData = writeData
        self.handlerQueue = queue
        self.handler = handler
        lowWater = limits.low
        highWater = limits.high
        priority = ThreadContext.withCurrent { context in
            queue.resolvePriority(for: context.propagatedPriority, flags: [], itemQoS: .unspecified)
        }
        ioprio = KernelPriority.ioPriority(for: priority.level)
        usesOffsets = channel.isRegularFile && !(isWrite && channel.appends)
        nextOffset = startOffset ?? 0
        deliverOffset = nextOffset
        spare = makeNode()
    }

    deinit { lock.deallocate() }

    /// Whether an operation of `length` bytes at file offset `start` can be issued:
    /// the kernel answers EINVAL for a request that passes Int64.max. A write needs
    /// all its bytes below it; a read only its first one, because it ends at the end
    /// of the file anyway (its requests stop at Int64.max: `nextRequest`).
    static func rangeFits(start: Int64, length: Int, isWrite: Bool) -> Bool {
        if length <= 0 { return true }
        if !isWrite { return start < Int64.max }
        return !start.addingReportingOverflow(Int64(length)).overflow
    }

    private func makeNode() -> WorkNodeRef {
        RuntimeParts.withPool { $0.allocate(kind: .block, priority: priority, block: { [self] in deliver() }) }
    }

    // MARK: Results (manager, or a thread ending the operation early)

    /// Adds read bytes in order. Any thread; never waits.
    func append(_ region: DataRegion) {
        let queue = lock.withLock { () -> Bool in
            pending.appendRegion(region)
            return claimDeliveryLocked(pending.count >= lowWater)
        }
        if queue { pushDelivery() }
    }

    /// No more results: the done handler runs after what is pending.
    func finish(error: Int32) {
        let queue = lock.withLock { () -> Bool in
            done = true
            doneError = error
            return claimDeliveryLocked(true)
        }
        if queue { pushDelivery() }
    }

    /// Delivers what is pending even below the low water: the channel's interval
    /// passed, or the read buffers are spent and these bytes hold part of them.
    func deliverPending() {
        let queue = lock.withLock { () -> Bool in
            if pending.count == 0 { return false }
            forceDelivery = true
            return claimDeliveryLocked(true)
        }
        if queue { pushDelivery() }
    }

    private func claimDeliveryLocked(_ wanted: Bool) -> Bool {
        if !wanted || deliveryQueued { return false }
        deliveryQueued = true
        return true
    }

    private func pushDelivery() {
        guard let node = spare else { ringletBug("an I/O operation on \(channel.name) has no delivery node") }
        spare = nil
        ThreadContext.withCurrent { $0.counters.countSubmitted(priority.level) }
        handlerQueue.push(node)
    }

    // MARK: Delivery (the handler's queue)

    /// Handler calls one delivery makes at most before it queues the next delivery
    /// behind what else waits on the handler's queue.
    static let handlerCallsPerDelivery = 32

    /// Runs the handler with what is pending, in pieces of at most `highWater`, and
    /// the done handler last. Gives the delivered bytes back to the buffer budget.
    ///
    /// After `handlerCallsPerDelivery` calls with bytes still pending, the delivery
    /// queues its successor and returns: a stream that never runs dry (/dev/zero, a
    /// fast socket) read with a small high water keeps the manager topping up
    /// `pending` as fast as the handler takes it, and one delivery that looped until
    /// it was empty held the queue for ever — no other item ran, and a
    /// `close(flags: .stop)` never ended the read.
    private func deliver() {
        spare = makeNode()
        var calls = 0
        while true {
            var final = false
            var error: Int32 = 0
            var yields = false
            let data = lock.withLock { () -> DispatchData? in
                let deliverable = pending.count >= lowWater || done || forceDelivery
                if !deliverable || (pending.count == 0 && !done) {
                    deliveryQueued = false
                    return nil
                }
                if calls == Self.handlerCallsPerDelivery {
                    // `deliveryQueued` stays set: the delivery queued below owns it.
                    yields = true
                    return nil
                }
                forceDelivery = false
                // Stopped (`close(flags: .stop)`, ECANCELED): what is left goes in one
                // last piece instead of high-water pieces, so that the stop ends the read
                // now (high water 1 over 256 KiB read ahead was 262,144 handler calls).
                let stoppedNow = done && doneError == Errno.cancelled.rawValue
                if pending.count > highWater && !stoppedNow {
                    let piece = pending.subdata(in: 0..<highWater)
                    pending = pending.subdata(in: highWater..<pending.count)
                    return piece
                }
                let all = pending
                pending = .empty
                if done {
                    final = true
                    error = doneError
                }
                return all
            }
            guard let data else {
                if yields { pushDelivery() }
                return
            }
            if final {
                finalDelivery(data, error)
                return
            }
            handler(false, data, 0)
            channel.engine.releaseBudget(isWrite ? 0 : data.count)
            calls += 1
        }
    }

    private func finalDelivery(_ data: DispatchData, _ error: Int32) {
        if isWrite {
            // GCD hands a write's handler the data it could not write (nil: all written).
            handler(true, data.count > 0 ? data : nil, error)
        } else if error != 0 {
            // GCD: a failed read's last bytes come without the error, then done with nil.
            if data.count > 0 {
                handler(false, data, 0)
                channel.engine.releaseBudget(data.count)
            }
            handler(true, nil, error)
        } else {
            handler(true, data, 0)
            channel.engine.releaseBudget(data.count)
        }
        if let node = spare {
            spare = nil
            ThreadContext.withCurrent { context in RuntimeParts.withPool { $0.release(node, context: context) } }
        }
        channel.operationFinished(self)
    }

    /// A write's final result: what it could not write (from `writeCursor`, or all
    /// of it when nothing was issued).
    func unwritten(from offset: Int) -> DispatchData {
        offset >= writeData.count ? .empty : writeData.subdata(in: offset..<writeData.count)
    }

    /// For a write: hands the unwritten remainder to the done handler.
    func finishWrite(unwrittenFrom offset: Int, error: Int32) {
        if error != 0 {
            let rest = unwritten(from: offset)
            lock.withLock { pending = rest }
        }
        finish(error: error)
    }
}
