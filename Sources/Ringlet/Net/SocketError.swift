/// A socket call that failed: the call, the socket it was made on (its descriptor and
/// addresses), the errno, and what to do about it when Ringlet can tell.
@_spi(RingletNet)
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public let errno: Errno
    /// "accept", "connect", "recvmsg", "sendmsg", "shutdown", "bind", "listen", "socket"...
    public let call: String
    /// What it was made on: `socket 7 (127.0.0.1:40112 -> 127.0.0.1:8080)`.
    public let subject: String
    public let advice: String

    init(_ errno: Errno, call: String, subject: String, advice: String = "") {
        self.errno = errno
        self.call = call
        self.subject = subject
        self.advice = advice.isEmpty ? Self.advice(for: errno) : advice
    }

    /// Whether the request ended because it was cancelled (its `cancel()`, or the
    /// socket's `close()`).
    public var isCancellation: Bool { errno == .cancelled }

    public var description: String {
        "\(call) on \(subject): \(errno.name)" + (advice.isEmpty ? "" : "; \(advice)")
    }

    static func advice(for errno: Errno) -> String {
        switch errno {
        case .tooManyOpenFiles:
            return "the process is out of descriptors: raise RLIMIT_NOFILE (ulimit -n) or close idle connections"
        case .tooManyOpenFilesInSystem: return "the system is out of files: raise fs.file-max"
        case .addressInUse: return "another socket holds this address: stop it, or pick another port or path"
        case .connectionRefused: return "nothing listens there: start the server first, or check the address"
        case .noSuchFile: return "no socket exists at that path: start the service first, or check the path"
        case .permissionDenied: return "the socket file belongs to another user or its directory is closed to this one"
        case .messageTooLong: return "the message is larger than the socket takes at once: send less, or raise SO_SNDBUF"
        case .cancelled: return ""
        default: return ""
        }
    }
}
