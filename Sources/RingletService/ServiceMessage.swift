@_spi(RingletNet) import Ringlet

/// A message that arrived on a session: its payload, the QoS its handler runs at, the
/// sender, and — for a request — the one reply it wants.
///
/// A request dropped without a reply answers itself: the sender's reply handler gets
/// `ServiceError.noReply`. Nothing waits forever on a forgotten reply.
public final class ServiceMessage: @unchecked Sendable {
    /// The bytes the sender sent.
    public let payload: DispatchData
    /// The QoS the sender claimed, and what this side granted after checking the claim
    /// against the sending thread's real scheduling (`qos`, what the handler runs at
    /// unless its queue's QoS is higher).
    public let claimedQoS: DispatchQoS
    public let qos: DispatchQoS
    /// The sending process, as the kernel says.
    public let peer: ServicePeer
    /// The thread that sent it and the activity it belonged to, in the sender's process.
    public let senderThreadID: Int32
    public let senderActivity: UInt32
    /// Whether the sender waits for `reply(_:)`.
    public let expectsReply: Bool

    let id: UInt64
    /// Strong (no weak reference: its side table would outlive the last message at exit
    /// in LeakSanitizer's eyes); the session holds no message, so there is no cycle.
    let session: ServiceSession?
    private let lock = ServiceLock()
    private var replied = false
    /// The boost this request holds until its reply is sent (nil: none began).
    var boost: ImportanceBoost?
    /// What the sender is told when this request goes unanswered.
    var unansweredReason = "the handler dropped the request without calling reply(_:)"

    init(payload: DispatchData, header: ServiceHeader, granted: DispatchQoS, peer: ServicePeer, session: ServiceSession) {
        self.payload = payload
        claimedQoS = header.qos
        qos = granted
        self.peer = peer
        senderThreadID = header.threadID
        senderActivity = header.activity
        expectsReply = header.kind == .request
        id = header.id
        self.session = session
    }

    deinit {
        guard expectsReply, takeReplyTurn() else { return }
        session?.sendFailure(to: id, reason: unansweredReason, boost: boost)
        boost?.end()
    }

    /// Sends the reply: once, for a message that wants one. Throws when the message
    /// wants none or was answered, when `payload` is over the limit, or when the
    /// session has ended. The boost this request holds ends once the reply is sent.
    public func reply(_ payload: DispatchData) throws(ServiceError) {
        guard let session else { throw .cancelled(endpoint: "(gone)") }
        guard expectsReply, takeReplyTurn() else { throw .replyNotExpected(endpoint: session.endpointName) }
        let boost = self.boost
        do {
            try session.sendPacket(kind: .reply, id: id, payload: payload) { boost?.end() }
        } catch {
            // The sender must not wait for a reply that cannot go: it gets the reason.
            session.sendFailure(to: id, reason: "the reply could not be sent: \(error)", boost: boost)
            throw error
        }
    }

    /// True the first time (this call may answer).
    private func takeReplyTurn() -> Bool {
        lock.withLock {
            if replied { return false }
            replied = true
            return true
        }
    }
}
