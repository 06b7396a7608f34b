@_spi(RingletNet) import Ringlet

/// Why a session ended, a send was refused or a reply did not come: each names the
/// endpoint or the peer and what to do.
public enum ServiceError: Error, Sendable, CustomStringConvertible, Equatable {
    /// `cancel()` was called on this session (or on its listener).
    case cancelled(endpoint: String)
    /// The peer closed the connection or its process ended (the kernel closed its end).
    case peerClosed(endpoint: String, peer: String)
    /// A socket call failed (connect, send, receive): `reason` names the call, the
    /// error and the fix.
    case socket(endpoint: String, errno: Errno, reason: String)
    /// A message above the size limit: refused on the sender's side, or ended a
    /// connection whose peer sent one anyway.
    case messageTooLarge(endpoint: String, bytes: Int, limit: Int)
    /// `queued` sends wait to be taken by the kernel: the peer reads slower than this side
    /// sends (or not at all), and the limit is reached.
    case sendQueueFull(endpoint: String, peer: String, queued: Int)
    /// The peer sent what is not a service packet; the connection is closed.
    case malformed(endpoint: String, peer: String, reason: String)
    /// The endpoint belongs to a process of another user.
    case ownedByAnotherUser(endpoint: String, uid: UInt32)
    /// The service did not accept within the patience (its backlog is full: it is stuck).
    case notAccepting(endpoint: String, seconds: Int)
    /// The service dropped the request without replying, or had no handler for it.
    case noReply(endpoint: String, reason: String)
    /// `reply(_:)` on a message that wants none, or a second time.
    case replyNotExpected(endpoint: String)
    /// The endpoint's name cannot be a Unix socket address.
    case badEndpoint(String, reason: String)

    public var description: String {
        switch self {
        case .cancelled(let endpoint):
            return "service session \(endpoint): cancelled"
        case .peerClosed(let endpoint, let peer):
            return "service session \(endpoint): \(peer) closed the connection (it exited, crashed or cancelled the session)"
        case .socket(let endpoint, _, let reason):  // a listener's bind as well as a session's calls
            return "service \(endpoint): \(reason)"
        case .messageTooLarge(let endpoint, let bytes, let limit):
            return "service session \(endpoint): a message of \(bytes) bytes is over the limit of \(limit) bytes; "
                + "send less, or raise ServiceOptions.messageBytes on both sides"
        case .sendQueueFull(let endpoint, let peer, let queued):
            return "service session \(endpoint): \(queued) sends wait to be taken by the kernel (\(peer) reads slower "
                + "than this side sends, or not at all); the message was not sent: retry later, cancel the session, "
                + "or raise ServiceOptions.queuedSendsLimit"
        case .malformed(let endpoint, let peer, let reason):
            return "service session \(endpoint): \(peer) sent \(reason); the connection is closed"
        case .ownedByAnotherUser(let endpoint, let uid):
            return "service endpoint \(endpoint) is served by user \(uid), not this one; "
                + "connect to your own user's service, or set ServiceOptions.trustsOtherUsers"
        case .notAccepting(let endpoint, let seconds):
            return "service endpoint \(endpoint) did not accept the connection within \(seconds) s: "
                + "its listener is stuck or its backlog is full"
        case .noReply(let endpoint, let reason):
            return "service session \(endpoint): no reply: \(reason)"
        case .replyNotExpected(let endpoint):
            return "service session \(endpoint): reply(_:) on a message that wants no reply, or a second time"
        case .badEndpoint(let name, let reason):
            return "service endpoint '\(name)': \(reason)"
        }
    }

    static func socket(_ endpoint: String, _ error: SocketError) -> ServiceError {
        .socket(endpoint: endpoint, errno: error.errno, reason: error.description)
    }

    public static func == (a: ServiceError, b: ServiceError) -> Bool { a.description == b.description }
}
