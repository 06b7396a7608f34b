/// What a continuous receive hands its handler.
@_spi(RingletNet)
public enum StreamEvent: Sendable {
    /// Bytes, in order. They sit in one of the runtime's receive buffers, which goes back
    /// when the data (and every slice of it) is released: a handler that keeps them
    /// holds the buffer, and once all are held, receives wait.
    case received(DispatchData)
    /// The receive is over, last: nil when the peer ended the stream (shut its side or
    /// closed), else the failure or the cancellation (`isCancellation`).
    case ended(SocketError?)
}

@_spi(RingletNet)
extension RingSocket {
    /// The size of each of the runtime's receive buffers: a `.received` chunk of this
    /// size filled its buffer, so more of the same message may follow.
    public static var receiveBufferBytes: Int { SocketEngine.receiveBufferBytes }

    /// Receives continuously, into buffers the kernel picks from the runtime's receive
    /// buffers (one multishot request on io_uring 6.0+; on epoll and older kernels, one
    /// receive after another, each into a free buffer), until the end of the stream, a
    /// failure or a cancellation. It takes the socket's receive turn for its lifetime.
    /// The buffers are `ioBufferBytes` / 16 in 16 KiB buffers (at least 8), shared by
    /// every socket of the process.
    /// For stream and SOCK_SEQPACKET sockets; a datagram socket (where 0 bytes is a
    /// message, not an end) traps: use `receive` there.
    @discardableResult
    public func receiveContinuously(queue: DispatchQueue, handler: @escaping (StreamEvent) -> Void) -> SocketRequest {
        if kind == .datagram {
            ringletMisuse("receiveContinuously on \(label): a datagram socket has no stream to end (0 bytes is a "
                + "message there); receive its datagrams with receive(upTo:queue:handler:)")
        }
        let message = SocketMessage(buffers: 1, controlBytes: 0, for: "socket \(fileDescriptor)")
        let request = SocketRequest(socket: self, work: .receiveStream(message: message), queue: queue) {
            request, result, final in
            let event: StreamEvent
            if !final, let id = request.deliveredBuffer {
                event = .received(request.socket.engine.buffers.data(id, bytes: Int(result)))
            } else if result == 0 {
                event = .ended(nil)
            } else {
                event = .ended(request.error(Errno(negated: result)))
            }
            request.run { handler(event) }
        }
        engine.start(request)
        return request
    }
}
