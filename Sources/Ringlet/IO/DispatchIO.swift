
/// A channel for reading and writing a file descriptor, source-compatible with GCD's
/// `DispatchIO`, with every read and write an io_uring request issued by the manager
/// thread: no worker ever blocks in read(2) or write(2), and the thread count does
/// not change while I/O runs.
///
/// - `.random` channels take offsets (relative to the file position when the channel
///   was created) and keep up to `ioQueueDepth` requests in flight per channel.
/// - `.stream` channels read and write in order; on a regular file they too keep
///   several requests in flight, on pipes and sockets one at a time.
///
/// Read handlers get data as it arrives, in pieces of at least the low water (default
/// 1 byte: as it arrives) and at most the high water, and `done` exactly once. Errors
/// are errno values; `ECANCELED` for operations a `.stop` close ended; a read past the
/// end of the file ends with `done`, empty data and 0. A read that fails hands over
/// what it holds first (not done, error 0), then `done` with nil data and the errno,
/// as GCD does. The cleanup handler runs once, after `close` and the last operation's
/// handler — or with the errno when the path could not be opened.
///
/// As libdispatch keeps one entry per descriptor, the `.stream` operations of every
/// channel on one descriptor (the class functions' too) run one after another: on a
/// regular file each continues from the descriptor's position, so concurrent writers
/// append whole records instead of overwriting each other.
// @unchecked Sendable: mutable state under `lock`; manager-side state belongs to the manager thread.
public class DispatchIO: DispatchObject, @unchecked Sendable {
    /// The descriptor and whether the channel opened it (then the channel closes it).
    let descriptor: ChannelDescriptor
    let type: StreamType
    /// What the descriptor is: offsets work (regular files) or not (streams).
    let isRegularFile: Bool
    /// The file position when the channel was created: offset 0 of a `.random` channel.
    let basePosition: Int64
    /// O_APPEND: writes go to the end, whatever the offset.
    let appends: Bool
    /// The errno every operation fails with (a path that could not be opened, a
    /// closed descriptor, `.random` on a pipe), or 0.
    let failure: Int32
    let cleanupQueue: DispatchQueue
    let engine: IOEngine
    let name: String

    private let lock = FutexLock()
    // Under `lock`:
    private var cleanupHandler: ((Int32) -> Void)?
    private var closed = false
    private var outstanding = 0      // operations whose done handler has not run
    private var running = 0          // of those, handed to the manager
    private var held: [Held] = []    // behind a barrier, in order
    private var barrierRunning = false
    private var lowWater = 1
    private var highWater = Int.max
    private var lowWaterWarned = false
    private var interval: (nanoseconds: UInt64, strict: Bool) = (0, false)
    // Manager thread only (see IOEngine):
    var stopped = false
    /// The descriptor was found closed or reused once (warned once).
    var reuseWarned = false

    /// An operation or a barrier waiting behind a barrier.
    private enum Held {
        case operation(IOOperation)
        case barrier(() -> Void)
    }

    init(type: StreamType, descriptor: ChannelDescriptor, failure: Int32, queue: DispatchQueue,
         cleanupHandler: @escaping (Int32) -> Void) {
        self.type = type
        self.descriptor = descriptor
        self.cleanupQueue = queue
        self.cleanupHandler = cleanupHandler
        engine = RuntimeParts.shared.manager.takeUnretainedValue().io
        name = "DispatchIO(fd \(descriptor.fd))"
        var description = (regularFile: false, position: Int64(0), appends: false)
        var error = failure
        if error == 0 {
            do throws(Errno) {
                description = try Descriptors.describe(descriptor.fd)
            } catch let refusal {
                error = refusal.rawValue
            }
        }
        isRegularFile = error == 0 && description.regularFile
        if error == 0 && type == .random && !isRegularFile { error = Errno.illegalSeek.rawValue }  // no offsets on a stream
        basePosition = description.position
        appends = description.appends
        self.failure = error
        super.init()
        if failure != 0 {
            // GCD reports a path it could not open through the cleanup handler.
            runCleanupLocked(error: failure)
        }
    }

    deinit {
        lock.withLock { runCleanupLocked(error: 0) }
        lock.deallocate()
    }

    /// The channel's descriptor (for a path channel, the one it opened; -1 if it failed).
    public var fileDescriptor: Int32 { descriptor.fd }

    // MARK: Limits

    /// Handlers of reads started after this get at most `highWater` bytes at a time.
    /// A low water above it comes down to it (as in GCD).
    public func setLimit(highWater: Int) {
        lock.withLock {
            self.highWater = Swift.max(highWater, 1)
            self.lowWater = Swift.min(self.lowWater, self.highWater)
        }
    }

    /// Handlers of reads started after this get data only once `lowWater` bytes are
    /// there (or at the end, or at the interval). Default 1: data as it arrives. A
    /// high water below it goes up to it (as in GCD).
    ///
    /// The bytes waiting for a handler come out of the runtime's bounded read buffers
    /// (`ioBufferBytes`, shared by every channel), so:
    /// - A low water above `ioBufferBytes` could never be met: it is clamped to
    ///   `ioBufferBytes`, with one warning per channel naming its fd and the key.
    /// - When the buffers are spent while reads wait below their low water (several
    ///   channels each holding part of the budget), those reads hand over what they
    ///   have, below their low water, so that no channel stalls the others; GCD
    ///   would grow memory instead.
    public func setLimit(lowWater: Int) {
        let budget = engine.pool.budget
        let warn = lock.withLock { () -> Bool in
            self.lowWater = Swift.min(Swift.max(lowWater, 1), budget)
            self.highWater = Swift.max(self.highWater, self.lowWater)
            let warn = lowWater > budget && !lowWaterWarned
            if warn { lowWaterWarned = true }
            return warn
        }
        if warn {
            ringletWarning("\(name): setLimit(lowWater: \(lowWater)) is more than the runtime's read buffers hold "
                + "('ioBufferBytes' \(budget)), so reads could never reach it; the channel uses \(budget). "
                + "Raise 'ioBufferBytes' or ask for less")
        }
    }

    /// Reads started after this deliver what they have every `interval`, even below
    /// the low water. `.strictInterval` makes the timer `.strict` (no leeway).
    public func setInterval(interval: DispatchTimeInterval, flags: IntervalFlags = []) {
        let nanoseconds = UInt64(Swift.max(interval.offsetNanoseconds, 0))
        lock.withLock { self.interval = (nanoseconds, flags.contains(.strictInterval)) }
    }

    var intervalSetting: (nanoseconds: UInt64, strict: Bool) { lock.withLock { interval } }

    var highWaterSetting: Int { lock.withLock { highWater } }

    // MARK: Operations

    /// Reads `length` bytes (Int.max: to the end) at `offset` (ignored by `.stream`
    /// channels). `ioHandler` runs on `queue` with each piece, `done` once, last.
    ///
    /// EINVAL (as pread(2) answers) for a negative offset or length, and for a read
    /// starting at or past the largest file offset (Int64.max).
    public func read(offset: Int, length: Int, queue: DispatchQueue,
                     ioHandler: @escaping (_ done: Bool, _ data: DispatchData?, _ error: Int32) -> Void) {
        read(offset: offset, length: length, queue: queue, endsWhenDrained: false, handler: ioHandler)
    }

    /// `endsWhenDrained`: on a pipe or socket, the read ends once it has data and the
    /// descriptor has no more (libdispatch's convenience read completes on EAGAIN).
    /// Returns the operation, which `IOEngine.cancel` can end early.
    @discardableResult
    func read(offset: Int, length: Int, queue: DispatchQueue, endsWhenDrained: Bool,
              handler: @escaping (_ done: Bool, _ data: DispatchData?, _ error: Int32) -> Void) -> IOOperation {
        let limits = lock.withLock { (lowWater, highWater) }
        let start = startOffset(offset)
        let operation = IOOperation(channel: self, isWrite: false, startOffset: start.offset,
                                    length: Swift.max(length, 0), writeData: .empty, queue: queue,
                                    limits: limits, endsWhenDrained: endsWhenDrained, handler: handler)
        let fits = start.offset.map { IOOperation.rangeFits(start: $0, length: length, isWrite: false) } ?? true
        admit(operation, invalid: offset < 0 || length < 0 || !start.valid || !fits)
        return operation
    }

    /// Writes `data` at `offset` (ignored by `.stream` channels and O_APPEND files).
    /// `ioHandler` runs once with `done`: nil data when all was written, else the
    /// data left unwritten and the errno (EINVAL for a negative offset, or a range
    /// past the largest file offset).
    public func write(offset: Int, data: DispatchData, queue: DispatchQueue,
                      ioHandler: @escaping (_ done: Bool, _ data: DispatchData?, _ error: Int32) -> Void) {
        startWrite(offset: offset, data: data, queue: queue, handler: ioHandler)
    }

    /// `write(offset:data:queue:ioHandler:)`, returning the operation.
    @discardableResult
    func startWrite(offset: Int, data: DispatchData, queue: DispatchQueue,
                    handler: @escaping (_ done: Bool, _ data: DispatchData?, _ error: Int32) -> Void) -> IOOperation {
        let start: (offset: Int64?, valid: Bool) = appends ? (nil, true) : startOffset(offset)
        let operation = IOOperation(channel: self, isWrite: true, startOffset: start.offset,
                                    length: data.count, writeData: data, queue: queue,
                                    limits: (1, Int.max), endsWhenDrained: false, handler: handler)
        let fits = start.offset.map { IOOperation.rangeFits(start: $0, length: data.count, isWrite: true) } ?? true
        admit(operation, invalid: offset < 0 || !start.valid || !fits)
        return operation
    }

    /// `.random`: the file offset of channel offset `offset` (`valid` false when it
    /// passes Int64.max); `.stream`: nil, decided at start (the descriptor's position
    /// on a file, none on a pipe).
    private func startOffset(_ offset: Int) -> (offset: Int64?, valid: Bool) {
        guard type == .random, isRegularFile else { return (nil, true) }
        let (sum, overflow) = basePosition.addingReportingOverflow(Int64(Swift.max(offset, 0)))
        return overflow ? (nil, false) : (sum, true)
    }

    /// Hands an operation to the manager, or holds it behind a barrier, or ends it
    /// at once on a closed or failed channel, or with EINVAL for a negative offset or
    /// length (as read(2) and pread(2) answer).
    private func admit(_ operation: IOOperation, invalid: Bool) {
        // (start now?, the errno it fails with at once: 0 for none)
        let (start, refusal) = lock.withLock { () -> (Bool, Int32) in
            outstanding += 1
            if !invalid && (!held.isEmpty || barrierRunning) {
                held.append(.operation(operation))
                return (false, 0)
            }
            running += 1
            return (true, invalid ? Errno.invalidArgument.rawValue : (closed ? Errno.cancelled.rawValue : 0))
        }
        if start { begin(operation, refusal: refusal) }
    }

    /// Starts a counted operation: to the manager, or ended at once. Held operations
    /// (released after a barrier) check `closed` here; `admit` checked it already.
    private func begin(_ operation: IOOperation, refusal given: Int32? = nil) {
        var refusal = given ?? (lock.withLock { closed } ? Errno.cancelled.rawValue : 0)
        if refusal == 0 { refusal = failure }
        if refusal != 0 {
            operation.isWrite ? operation.finishWrite(unwrittenFrom: 0, error: refusal)
                              : operation.finish(error: refusal)
            return
        }
        engine.submit(operation)
    }

    /// The done handler of `operation` has run (its queue).
    func operationFinished(_ operation: IOOperation) {
        var starts: [IOOperation] = []
        var barrier: (() -> Void)?
        lock.withLock {
            outstanding -= 1
            running -= 1
            (starts, barrier) = advanceLocked()
            if closed { runCleanupLocked(error: 0) }
        }
        launch(starts, barrier)
    }

    // MARK: Barrier

    /// Runs `barrier` once every operation submitted before it has finished, and
    /// before any submitted after it starts. It runs on the channel's queue (the one
    /// given at creation), where the descriptor may be used directly (fsync, ftruncate).
    public func barrier(execute barrier: @escaping () -> Void) {
        let runNow = lock.withLock { () -> Bool in
            if held.isEmpty && !barrierRunning && running == 0 {
                barrierRunning = true
                return true
            }
            held.append(.barrier(barrier))
            return false
        }
        if runNow { launch([], barrier) }
    }

    /// What may start now: held operations up to the next barrier, then that barrier
    /// once nothing runs.
    private func advanceLocked() -> ([IOOperation], (() -> Void)?) {
        var starts: [IOOperation] = []
        while !barrierRunning, let first = held.first {
            switch first {
            case .operation(let operation):
                held.removeFirst()
                running += 1
                starts.append(operation)
            case .barrier(let body):
                if running > 0 { return (starts, nil) }
                held.removeFirst()
                barrierRunning = true
                return (starts, body)
            }
        }
        return (starts, nil)
    }

    private func launch(_ starts: [IOOperation], _ barrier: (() -> Void)?) {
        starts.forEach { begin($0) }
        guard let barrier else { return }
        let body = UncheckedSendable(barrier)
        cleanupQueue.async { [self] in
            body.value()
            var next: ([IOOperation], (() -> Void)?) = ([], nil)
            lock.withLock {
                barrierRunning = false
                next = advanceLocked()
                if closed { runCleanupLocked(error: 0) }
            }
            launch(next.0, next.1)
        }
    }

    // MARK: Closing

    /// Closes the channel: later operations fail with ECANCELED; with `.stop`, so do
    /// the ones under way (their requests are cancelled on the ring). The cleanup
    /// handler runs once every operation's done handler has run.
    public func close(flags: CloseFlags = []) {
        lock.withLock {
            closed = true
            runCleanupLocked(error: 0)
        }
        if flags.contains(.stop) { engine.stop(self) }
    }

    /// Runs the cleanup handler once the channel is closed and idle (or failed to open).
    private func runCleanupLocked(error: Int32) {
        guard let handler = cleanupHandler else { return }
        if error == 0 && (outstanding > 0 || barrierRunning || !held.isEmpty) { return }
        cleanupHandler = nil
        descriptor.channelDone()
        let body = UncheckedSendable(handler)
        cleanupQueue.async { body.value(error) }
    }
}
