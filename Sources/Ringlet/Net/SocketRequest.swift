import Synchronization

/// One request on a socket, from the call to its last handler: an accept (which keeps
/// accepting until it is cancelled or fails), a connect, a receive, a send or a
/// shutdown. The manager issues it and reads its completions (SocketEngine.swift);
/// its handler runs on the caller's queue, once for each result, and a request always
/// ends with exactly one final result — success, failure or cancellation — so nothing
/// submitted is lost without a report.
///
///   queued --(1)--> issued --(2)--> [waiting for readiness --(3)--> issued] --(4)--> ended
///
///   (1) SocketEngine.issue: its turn came (sends and shutdowns of a socket go one at a
///       time, in order, and so do its receives)  (2) EAGAIN: a one-shot poll
///   (3) the poll's completion  (4) SocketEngine.completed / end
// @unchecked Sendable: the "manager" fields are the manager thread's; `cancelled` is atomic.
@_spi(RingletNet)
public final class SocketRequest: @unchecked Sendable {
    enum Work {
        case accept
        case connect(address: UnsafeMutableRawPointer, length: UInt32)
        case receive(message: SocketMessage, buffer: UnsafeMutableRawPointer, capacity: Int)
        /// Continuous: into the engine's receive buffers (RingSocket+Stream.swift).
        case receiveStream(message: SocketMessage)
        case send(message: SocketMessage, data: DispatchData)
        case shutdown(how: Int32)

        var isAccept: Bool { if case .accept = self { return true } else { return false } }
    }

    let socket: RingSocket
    let work: Work
    /// Where the handler runs (nil: on the manager thread — only the awaiting forms,
    /// whose handler just resumes a task).
    let queue: DispatchQueue?
    /// Gets each result: (result >= 0 or -errno, more results follow).
    let deliver: (_ request: SocketRequest, _ result: Int32, _ final: Bool) -> Void

    // Manager:
    var slot = -1
    var generation: UInt32 = 0
    var polling = false
    var retries = 0
    var ended = false
    var sent = 0
    /// An accept that backs off after EMFILE (its timer), and whether it runs multishot.
    var backoff: TimerQueue.Handle?
    var multishot = true
    /// A continuous receive: on the kernel's provided-buffer ring (else one receive at a
    /// time into `bufferID`, a buffer of the free list), and the buffer being delivered.
    var provided = false
    /// Without the kernel's ring, a continuous receive takes a buffer only once the
    /// socket is readable (a poll first), so idle sockets hold none.
    var readable = false
    var bufferID: UInt16?
    var deliveredBuffer: UInt16?

    let cancelRequested = Atomic<Bool>(false)

    init(socket: RingSocket, work: Work, queue: DispatchQueue?,
         deliver: @escaping (SocketRequest, Int32, Bool) -> Void) {
        self.socket = socket
        self.work = work
        self.queue = queue
        self.deliver = deliver
    }

    /// A receive handed its buffer to the data it delivered (`takeReceived`).
    private var bufferGiven = false

    deinit {
        switch work {
        case .connect(let address, _): address.deallocate()
        case .receive(_, let buffer, _) where !bufferGiven: buffer.deallocate()
        default: break
        }
    }

    /// A receive's `count` bytes as data: the buffer itself when they fill most of it
    /// (no copy; the data frees it), else a copy (a few bytes do not hold a large buffer).
    func takeReceived(_ count: Int) -> DispatchData {
        guard case .receive(_, let buffer, let capacity) = work, count > 0 else { return .empty }
        if count * 4 < capacity * 3 {
            return DispatchData(bytes: UnsafeRawBufferPointer(start: buffer, count: count))
        }
        bufferGiven = true
        return DispatchData(regions: [DataRegion(storage: DataStorage(base: buffer, capacity: capacity,
                                                                      release: .deallocate),
                                                 start: 0, count: count)])
    }

    /// Ends the request early: its handler gets a cancellation (ECANCELED) as its final
    /// result, unless the request ended first. Any thread; once is enough.
    public func cancel() {
        if cancelRequested.exchange(true, ordering: .acquiringAndReleasing) { return }
        socket.engine.cancel(self)
    }

    /// The call, for messages: "recvmsg on socket 7 (...)".
    func error(_ errno: Errno) -> SocketError {
        SocketError(errno, call: callName, subject: socket.label)
    }

    var callName: String {
        switch work {
        case .accept: return "accept"
        case .connect: return "connect"
        case .receive: return "recvmsg"
        case .receiveStream: return "recv"
        case .send: return "sendmsg"
        case .shutdown: return "shutdown"
        }
    }

    /// The call as the ring takes it (a shutdown never goes there: SocketEngine.issue).
    var call: SocketCall {
        let fd = socket.fileDescriptor
        switch work {
        case .accept: return .accept(fd: fd, multishot: multishot)
        case .connect(let address, let length): return .connect(fd: fd, address: address, length: length)
        case .receive(let message, _, _): return .receive(fd: fd, message: message.header)
        case .receiveStream(let message):
            return provided ? .receiveProvided(fd: fd, group: ProvidedBuffers.group, multishot: multishot)
                : .receive(fd: fd, message: message.header)
        case .send(let message, _): return .send(fd: fd, message: message.header)
        case .shutdown: ringletBug("\(socket.label): a shutdown was queued on the ring; the manager makes it itself")
        }
    }

    /// Runs `body` where the handler runs.
    func run(_ body: @escaping () -> Void) {
        guard let queue else { return body() }
        let work = UncheckedSendable(body)
        queue.async { work.value() }
    }
}
