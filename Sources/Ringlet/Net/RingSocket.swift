import Synchronization

/// A socket whose accepts, connects, receives, sends and shutdowns are requests on
/// the runtime's ring (on the epoll backend, the same requests made without blocking
/// when the socket is ready): no thread waits in a socket call. For add-on layers —
/// a service library, an event loop — through `@_spi(RingletNet) import Ringlet`.
///
/// The socket owns its descriptor: `close()` ends every request still under way
/// (their handlers get a cancellation) and closes the descriptor once the last one is
/// back, so a number is never reused under a request. A socket dropped without
/// `close()` closes its descriptor when it goes (no request holds it by then: each
/// holds its socket).
///
/// Sends and shutdowns go one at a time in the order they were asked, and receives
/// too, so a stream's bytes are neither interleaved nor reordered; accepts and
/// connects go at once.
// @unchecked Sendable: the lanes are the manager thread's; `closing` is atomic.
@_spi(RingletNet)
public final class RingSocket: @unchecked Sendable {
    /// What kind of socket: a byte stream (TCP, Unix stream), packets in order with
    /// their edges kept (Unix SOCK_SEQPACKET) or datagrams.
    public enum Kind: Sendable {
        case stream, seqpacket, datagram

        var value: Int32 {
            switch self {
            case .stream: return SocketCalls.streamType
            case .seqpacket: return SocketCalls.seqpacketType
            case .datagram: return SocketCalls.datagramType
            }
        }
    }

    /// Which side `shutdown` closes.
    public enum Direction: Sendable {
        case read, write, both

        var how: Int32 {
            switch self {
            case .read: return SocketCalls.shutRead
            case .write: return SocketCalls.shutWrite
            case .both: return SocketCalls.shutBoth
            }
        }
    }

    /// An integer socket option: SOL_SOCKET's and TCP's that servers set.
    public enum Option: Sendable {
        case reuseAddress, keepAlive, sendBuffer, receiveBuffer, passCredentials, noDelay

        var levelAndName: (Int32, Int32) {
            switch self {
            case .reuseAddress: return (SocketCalls.socketLevel, SocketCalls.reuseAddress)
            case .keepAlive: return (SocketCalls.socketLevel, SocketCalls.keepAlive)
            case .sendBuffer: return (SocketCalls.socketLevel, SocketCalls.sendBuffer)
            case .receiveBuffer: return (SocketCalls.socketLevel, SocketCalls.receiveBuffer)
            case .passCredentials: return (SocketCalls.socketLevel, SocketCalls.passCredentials)
            case .noDelay: return (SocketCalls.tcpLevel, SocketCalls.tcpNoDelay)
            }
        }
    }

    public let fileDescriptor: Int32
    public let kind: Kind
    let engine: SocketEngine
    /// `close()` was called (any thread).
    let closing = Atomic<Bool>(false)
    /// Sends and shutdowns asked and not ended: while any is, `sendNow` takes nothing.
    let sendsOutstanding = Atomic<Int>(0)
    /// The message header `sendNow` fills, kept from one call to the next (its caller
    /// orders the socket's sends, so one at a time) and its room for buffers.
    var nowMessage: SocketMessage?
    var nowMessageBuffers = 0

    // Manager:
    /// Sends and shutdowns, in order; the first is issued.
    var sendLane: [SocketRequest] = []
    /// Receives, in order; the first is issued.
    var receiveLane: [SocketRequest] = []
    /// Accepts and connects under way, and waiting accepts (backing off).
    var others: [SocketRequest] = []
    /// Requests issued and not back (a poll counts as one).
    var inFlight = 0
    var descriptorClosed = false
    /// The manager took the `close()` (its handler is in place): from now on the
    /// descriptor closes once no request is on the ring.
    var closeRequested = false
    var closeHandler: (queue: DispatchQueue?, body: () -> Void)?

    /// Adopts `fd` (a socket, non-blocking or not: it is made non-blocking, since the
    /// epoll backend's calls must never block the manager): the socket owns it from now on.
    public convenience init(adopting fd: Int32, kind: Kind) {
        _ = SocketCalls.makeNonBlocking(fd)  // a bad descriptor fails its first request, named
        self.init(adopting: fd, kind: kind, engine: RuntimeParts.shared.manager.takeUnretainedValue().sockets)
    }

    init(adopting fd: Int32, kind: Kind, engine: SocketEngine) {
        fileDescriptor = fd
        self.kind = kind
        self.engine = engine
    }

    deinit {
        if !descriptorClosed { Descriptors.close(fileDescriptor) }
    }

    /// A new socket of `family` (`SocketAddress.inetFamily`, `inet6Family`, `unixFamily`) and `kind`.
    public static func open(family: Int32, kind: Kind) throws(SocketError) -> RingSocket {
        let fd = SocketCalls.open(family: family, type: kind.value)
        if fd < 0 {
            throw SocketError(Errno(negated: fd), call: "socket", subject: "a new socket of family \(family)")
        }
        return RingSocket(adopting: fd, kind: kind)
    }

    /// A connected pair of Unix sockets.
    public static func pair(kind: Kind) throws(SocketError) -> (RingSocket, RingSocket) {
        let (r, first, second) = SocketCalls.pair(type: kind.value)
        if r < 0 { throw SocketError(Errno(negated: r), call: "socketpair", subject: "a new pair of Unix sockets") }
        return (RingSocket(adopting: first, kind: kind), RingSocket(adopting: second, kind: kind))
    }

    /// A socket bound to `address` and listening, ready for `accept`. An IP listener
    /// takes SO_REUSEADDR (a restarted server binds its port again at once).
    public static func listening(on address: SocketAddress, kind: Kind = .stream,
                                 backlog: Int32 = 128) throws(SocketError) -> RingSocket {
        let socket = try open(family: address.family, kind: kind)
        if address.family != SocketAddress.unixFamily { try socket.setOption(.reuseAddress, 1) }
        try socket.bind(to: address)
        try socket.listen(backlog: backlog)
        return socket
    }

    /// Binds the socket to `address`: for a layer that sets options of its own first
    /// (`listening(on:)` does both steps).
    public func bind(to address: SocketAddress) throws(SocketError) {
        let bound = SocketCalls.bind(fileDescriptor, to: address.bytes)
        if bound < 0 { throw SocketError(Errno(negated: bound), call: "bind", subject: "\(label) to \(address)") }
    }

    /// Makes a bound socket listen, with room for `backlog` connections not yet accepted.
    public func listen(backlog: Int32) throws(SocketError) {
        let listened = SocketCalls.listen(fileDescriptor, backlog: backlog)
        if listened < 0 { throw SocketError(Errno(negated: listened), call: "listen", subject: label) }
    }

    /// Sets an option by its level and name, as setsockopt(2) takes them: for options
    /// `Option` does not name (a layer's own, such as SO_REUSEPORT or TCP_KEEPIDLE).
    public func setOption(level: Int32, name: Int32, _ value: Int32) throws(SocketError) {
        let r = SocketCalls.setOption(fileDescriptor, level: level, name: name, value: value)
        if r < 0 { throw SocketError(Errno(negated: r), call: "setsockopt(\(level), \(name))", subject: label) }
    }

    /// Reads an option by its level and name (getsockopt(2)).
    public func option(level: Int32, name: Int32) throws(SocketError) -> Int32 {
        let (r, value) = SocketCalls.option(fileDescriptor, level: level, name: name)
        if r < 0 { throw SocketError(Errno(negated: r), call: "getsockopt(\(level), \(name))", subject: label) }
        return value
    }

    // MARK: Options and addresses (the calling thread: none of these waits)

    public func setOption(_ option: Option, _ value: Int32) throws(SocketError) {
        let (level, name) = option.levelAndName
        let r = SocketCalls.setOption(fileDescriptor, level: level, name: name, value: value)
        if r < 0 { throw SocketError(Errno(negated: r), call: "setsockopt", subject: label) }
    }

    public func option(_ option: Option) throws(SocketError) -> Int32 {
        let (level, name) = option.levelAndName
        let (r, value) = SocketCalls.option(fileDescriptor, level: level, name: name)
        if r < 0 { throw SocketError(Errno(negated: r), call: "getsockopt", subject: label) }
        return value
    }

    public func localAddress() throws(SocketError) -> SocketAddress {
        do throws(Errno) {
            return SocketAddress(bytes: try SocketCalls.localAddress(fileDescriptor))
        } catch {
            throw SocketError(error, call: "getsockname", subject: "socket \(fileDescriptor)")
        }
    }

    public func peerAddress() throws(SocketError) -> SocketAddress {
        do throws(Errno) {
            return SocketAddress(bytes: try SocketCalls.peerAddress(fileDescriptor))
        } catch {
            throw SocketError(error, call: "getpeername", subject: "socket \(fileDescriptor)")
        }
    }

    /// The peer process of a Unix socket as it was when it connected (SO_PEERCRED).
    public func peerCredentials() throws(SocketError) -> PeerCredentials {
        let (r, pid, uid, gid) = SocketCalls.peerCredentials(fileDescriptor)
        if r < 0 { throw SocketError(Errno(negated: r), call: "getsockopt(SO_PEERCRED)", subject: label) }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }

    /// `socket 7 (stream 127.0.0.1:40112 -> 127.0.0.1:8080)`: for messages.
    public var label: String {
        let kindName = kind == .stream ? "stream" : kind == .seqpacket ? "seqpacket" : "datagram"
        if closing.load(ordering: .relaxed) { return "socket \(fileDescriptor) (\(kindName), closed)" }
        let local = (try? localAddress())?.description ?? "?"
        guard let peer = try? peerAddress() else { return "socket \(fileDescriptor) (\(kindName) \(local))" }
        return "socket \(fileDescriptor) (\(kindName) \(local) -> \(peer))"
    }

    // MARK: Closing

    /// Ends every request still under way (each handler gets a cancellation as its
    /// final result) and closes the descriptor once none is left on the ring; then
    /// `handler`, if given, runs on `queue` (nil: the default global queue). Requests
    /// asked after this end at once with a cancellation. A second call does nothing.
    public func close(queue: DispatchQueue? = nil, handler: (() -> Void)? = nil) {
        if closing.exchange(true, ordering: .acquiringAndReleasing) { return }
        engine.close(self, then: handler.map { (queue ?? DispatchQueue.global(), $0) })
    }
}
