/// One control message (ancillary data) sent or received with a message: its level
/// and type (`SOL_SOCKET` with `SCM_RIGHTS` or `SCM_CREDENTIALS`) and bytes.
@_spi(RingletNet)
public struct ControlMessage: Sendable {
    public let level: Int32
    public let type: Int32
    public let data: [UInt8]

    public init(level: Int32, type: Int32, data: [UInt8]) {
        self.level = level
        self.type = type
        self.data = data
    }

    /// SCM_CREDENTIALS with this process's pid, uid and gid: what the kernel checks
    /// and passes on to a receiver that set `passCredentials`.
    public static var ownCredentials: ControlMessage {
        ControlMessage(level: SocketCalls.socketLevel, type: SocketCalls.credentials, data: SocketCalls.ownCredentials())
    }

    /// SCM_RIGHTS passing `descriptors` (the receiver gets its own copies, close-on-exec).
    public static func descriptors(_ descriptors: [Int32]) -> ControlMessage {
        var bytes: [UInt8] = []
        for fd in descriptors { withUnsafeBytes(of: fd) { bytes.append(contentsOf: $0) } }
        return ControlMessage(level: SocketCalls.socketLevel, type: SocketCalls.rights, data: bytes)
    }

    /// The pid, uid and gid of an SCM_CREDENTIALS message (nil for another kind).
    public var credentials: PeerCredentials? {
        guard level == SocketCalls.socketLevel, type == SocketCalls.credentials,
              data.count >= SocketCalls.credentialsBytes else { return nil }
        return data.withUnsafeBytes { raw in
            PeerCredentials(pid: raw.loadUnaligned(fromByteOffset: 0, as: Int32.self),
                            uid: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self),
                            gid: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        }
    }

    /// The descriptors of an SCM_RIGHTS message (empty for another kind); the receiver owns them.
    public var descriptors: [Int32] {
        guard level == SocketCalls.socketLevel, type == SocketCalls.rights else { return [] }
        return data.withUnsafeBytes { raw in
            (0..<raw.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self) }
        }
    }
}

/// Who is at the other end of a Unix socket (SO_PEERCRED, or SCM_CREDENTIALS).
@_spi(RingletNet)
public struct PeerCredentials: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32
}

/// What one receive brought.
@_spi(RingletNet)
public struct ReceivedMessage: Sendable {
    /// The bytes; empty with `endOfStream` when the peer shut its side or closed.
    public let data: DispatchData
    public let control: [ControlMessage]
    /// The message was longer than the buffer (datagrams and SOCK_SEQPACKET: the rest is lost).
    public let truncated: Bool
    /// The control data was longer than the room asked for (some was lost; passed
    /// descriptors that did not fit were closed by the kernel).
    public let controlTruncated: Bool
    /// The sender's address (datagram sockets; nil otherwise).
    public let sender: SocketAddress?
    /// 0 bytes from a stream or SOCK_SEQPACKET socket: the peer will send no more.
    public let endOfStream: Bool
}
