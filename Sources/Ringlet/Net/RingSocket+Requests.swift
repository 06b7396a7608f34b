import Synchronization

/// What an accept hands its handler: each connection, a refusal the listener outlives,
/// and — once, last — the end.
@_spi(RingletNet)
public enum AcceptEvent: Sendable {
    /// A new connection, non-blocking and close-on-exec; the handler owns it.
    case accepted(RingSocket)
    /// The process or system is out of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
    /// ENOMEM): the connection waits in the backlog, and the accept tries again after
    /// `SocketEngine.acceptBackoff` (100 ms) rather than spin.
    case refused(SocketError)
    /// The accept is over: cancelled (`isCancellation`) or failed; no event follows.
    case ended(SocketError)
}

// The requests. Each handler runs on `queue`; each request's last result is final
// (an accept's `.ended`), and a request cancelled or cut by `close()` ends with
// ECANCELED. Requests are posted to the manager: none of these calls waits.
@_spi(RingletNet)
extension RingSocket {
    /// Accepts connections until cancelled or a failure the listener cannot outlive.
    /// One multishot request on the ring (on kernels before 5.19, one request per connection).
    @discardableResult
    public func accept(queue: DispatchQueue, handler: @escaping (AcceptEvent) -> Void) -> SocketRequest {
        let request = SocketRequest(socket: self, work: .accept, queue: queue) { request, result, final in
            let event: AcceptEvent
            if result >= 0 {
                event = .accepted(RingSocket(adopting: result, kind: request.socket.kind, engine: request.socket.engine))
            } else if final {
                event = .ended(request.error(Errno(negated: result)))
            } else {
                event = .refused(request.error(Errno(negated: result)))
            }
            request.run { handler(event) }
        }
        engine.start(request)
        return request
    }

    /// Connects to `address`.
    @discardableResult
    public func connect(to address: SocketAddress, queue: DispatchQueue,
                        handler: @escaping (Result<Void, SocketError>) -> Void) -> SocketRequest {
        connectRequest(to: address, queue: queue) { result in handler(result) }
    }

    /// Receives up to `maxBytes` bytes, and up to `controlBytes` of control data (room
    /// for CMSG_SPACE of it: `controlSpace(forBytes:)`).
    @discardableResult
    public func receive(upTo maxBytes: Int, controlBytes: Int = 0, queue: DispatchQueue,
                        handler: @escaping (Result<ReceivedMessage, SocketError>) -> Void) -> SocketRequest {
        receiveRequest(upTo: maxBytes, controlBytes: controlBytes, queue: queue) { result in handler(result) }
    }

    /// Sends all of `data` (a stream: in as many requests as it takes; a packet or a
    /// datagram: at once, or EMSGSIZE) with `control` going with its first bytes. The
    /// handler gets the bytes sent. A failure after some bytes went says so in its
    /// advice.
    @discardableResult
    public func send(_ data: DispatchData, control: [ControlMessage] = [], queue: DispatchQueue,
                     handler: @escaping (Result<Int, SocketError>) -> Void) -> SocketRequest {
        sendRequest(data, control: control, queue: queue) { result in handler(result) }
    }

    /// Shuts one side or both, after the sends asked before it.
    @discardableResult
    public func shutdown(_ direction: Direction, queue: DispatchQueue,
                         handler: @escaping (Result<Void, SocketError>) -> Void) -> SocketRequest {
        sendsOutstanding.wrappingAdd(1, ordering: .relaxed)
        let request = SocketRequest(socket: self, work: .shutdown(how: direction.how), queue: queue) {
            request, result, _ in
            request.socket.sendsOutstanding.wrappingSubtract(1, ordering: .releasing)
            let outcome: Result<Void, SocketError> = result < 0 ? .failure(request.error(Errno(negated: result))) : .success(())
            request.run { handler(outcome) }
        }
        engine.start(request)
        return request
    }

    /// `receive` whose handler runs on the manager thread as the completion arrives,
    /// with no item and no worker woken for it: for a layer whose handler only parses
    /// and hands work on (a service's packets). It holds up every other completion while
    /// it runs, so it must not block or run long.
    @discardableResult
    public func receive(upTo maxBytes: Int, controlBytes: Int = 0,
                        handlerOnManager handler: @escaping (Result<ReceivedMessage, SocketError>) -> Void) -> SocketRequest {
        receiveRequest(upTo: maxBytes, controlBytes: controlBytes, queue: nil) { result in handler(result) }
    }

    /// `send` whose handler runs on the manager thread (see
    /// `receive(upTo:controlBytes:handlerOnManager:)`): a send whose result only needs
    /// recording costs no item.
    @discardableResult
    public func send(_ data: DispatchData, control: [ControlMessage] = [],
                     handlerOnManager handler: @escaping (Result<Int, SocketError>) -> Void) -> SocketRequest {
        sendRequest(data, control: control, queue: nil) { result in handler(result) }
    }

    /// Sends what the kernel takes of `data` now, on the calling thread, without
    /// waiting and without the manager: the bytes taken (0 when the socket's buffer is
    /// full, or when a send or shutdown of this socket is still under way — queue the
    /// rest with `send`, which keeps the order). For a layer that orders its own sends
    /// and its close on one thread (an event loop): a close asked on another thread
    /// meanwhile could let the number be reused before this call.
    @_spi(RingletNet)
    public func sendNow(_ data: DispatchData) -> Result<Int, SocketError> {
        if sendsOutstanding.load(ordering: .acquiring) != 0 || closing.load(ordering: .acquiring) || data.count == 0 {
            return .success(0)
        }
        let regions = data.regions
        let message: SocketMessage
        if let kept = nowMessage, nowMessageBuffers >= regions.count {
            kept.reset()
            message = kept
        } else {
            nowMessageBuffers = max(regions.count, 8)
            message = SocketMessage(buffers: nowMessageBuffers, controlBytes: 0, for: "socket \(fileDescriptor)")
            nowMessage = message
        }
        for region in regions where region.count > 0 { message.add(region.storage.base + region.start, count: region.count) }
        let result = SocketCalls.sendNow(fileDescriptor, message)
        if result >= 0 { return .success(Int(result)) }
        let errno = Errno(negated: Int32(truncatingIfNeeded: result))
        if errno == .tryAgain || errno == .interrupted { return .success(0) }
        return .failure(SocketError(errno, call: "sendmsg", subject: label))
    }

    /// CMSG_SPACE(bytes): the control room a receive needs for a message of `bytes`.
    public static func controlSpace(forBytes bytes: Int) -> Int { SocketCalls.controlSpace(bytes) }

    // MARK: Shared by the handler and the awaiting forms

    func connectRequest(to address: SocketAddress, queue: DispatchQueue?,
                        _ done: @escaping (Result<Void, SocketError>) -> Void) -> SocketRequest {
        let copy = UnsafeMutableRawPointer.allocate(byteCount: max(address.bytes.count, 1), alignment: 8)
        address.bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress.unsafelyUnwrapped, byteCount: $0.count) }
        let work = SocketRequest.Work.connect(address: copy, length: UInt32(address.bytes.count))
        let request = SocketRequest(socket: self, work: work, queue: queue) { request, result, _ in
            let outcome: Result<Void, SocketError>
            if result < 0 {
                let errno = Errno(negated: result)
                outcome = .failure(SocketError(errno, call: "connect", subject: "\(request.socket.label) to \(address)"))
            } else {
                outcome = .success(())
            }
            request.run { done(outcome) }
        }
        engine.start(request)
        return request
    }

    func receiveRequest(upTo maxBytes: Int, controlBytes: Int, queue: DispatchQueue?,
                        _ done: @escaping (Result<ReceivedMessage, SocketError>) -> Void) -> SocketRequest {
        let capacity = max(maxBytes, 1)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        let message = SocketMessage(buffers: 1, controlBytes: controlBytes, for: "socket \(fileDescriptor)")
        message.add(buffer, count: capacity)
        let kind = self.kind
        let request = SocketRequest(socket: self, work: .receive(message: message, buffer: buffer, capacity: capacity),
                                    queue: queue) { request, result, _ in
            let outcome: Result<ReceivedMessage, SocketError>
            if result < 0 {
                outcome = .failure(request.error(Errno(negated: result)))
            } else {
                let count = Int(result)
                let data = request.takeReceived(count)
                let flags = message.flags
                outcome = .success(ReceivedMessage(
                    data: data, control: message.receivedControl.map { ControlMessage(level: $0.level, type: $0.type, data: $0.data) },
                    truncated: flags & SocketCalls.messageTruncated != 0,
                    controlTruncated: flags & SocketCalls.controlTruncated != 0,
                    sender: kind == .datagram ? message.senderAddress.map { SocketAddress(bytes: $0) } : nil,
                    endOfStream: count == 0 && kind != .datagram))
            }
            request.run { done(outcome) }
        }
        engine.start(request)
        return request
    }

    func sendRequest(_ data: DispatchData, control: [ControlMessage], queue: DispatchQueue?,
                     _ done: @escaping (Result<Int, SocketError>) -> Void) -> SocketRequest {
        let controlRoom = control.reduce(0) { $0 + SocketCalls.controlSpace($1.data.count) }
        let message = SocketMessage(buffers: data.regions.count, controlBytes: controlRoom,
                                    for: "socket \(fileDescriptor)")
        for region in data.regions where region.count > 0 {
            message.add(region.storage.base + region.start, count: region.count)
        }
        for item in control { _ = message.addControl(level: item.level, type: item.type, data: item.data) }  // room was made
        let total = data.count
        sendsOutstanding.wrappingAdd(1, ordering: .relaxed)
        let request = SocketRequest(socket: self, work: .send(message: message, data: data), queue: queue) {
            request, result, _ in
            request.socket.sendsOutstanding.wrappingSubtract(1, ordering: .releasing)
            let outcome: Result<Int, SocketError>
            if result < 0 {
                let errno = Errno(negated: result)
                outcome = .failure(request.sent == 0 ? request.error(errno)
                    : SocketError(errno, call: "sendmsg", subject: request.socket.label,
                                  advice: "\(request.sent) of \(total) bytes were sent before it failed"))
            } else {
                outcome = .success(request.sent)
            }
            request.run { done(outcome) }
        }
        engine.start(request)
        return request
    }
}
