@_spi(RingletNet) import Ringlet

/// Limits and trust of a session or a listener.
public struct ServiceOptions: Sendable {
    /// The largest payload a message may carry, in bytes. A larger one is refused on the
    /// sender's side (`ServiceError.messageTooLarge`); a peer that sends one anyway has
    /// its connection closed. Both sides must agree. Default: the board profile's
    /// `serviceMessageBytes` (64 KiB on most boards, less on the small ones: one packet
    /// must fit the socket's send buffer, `net.core.wmem_default`, 208 KiB on most systems).
    public var messageBytes: Int

    /// Talk to a peer of another user (off: a client refuses a service whose process
    /// belongs to another user, a listener a client's).
    public var trustsOtherUsers: Bool

    /// How long a client waits for the service to accept (a stuck listener is reported,
    /// not waited on forever).
    public var acceptPatienceSeconds: Int

    /// Sends that may wait to be taken by the kernel — on their way to the ring, or
    /// waiting for room in a full socket buffer (the peer reads slower than this side
    /// sends, or not at all); one more is refused with `ServiceError.sendQueueFull`
    /// instead of piling up. Generous by default: a burst from a loop stays far below.
    public var queuedSendsLimit: Int

    public init(messageBytes: Int = Runtime.current.configuration.serviceMessageBytes, trustsOtherUsers: Bool = false,
                acceptPatienceSeconds: Int = 5, queuedSendsLimit: Int = 4096) {
        self.messageBytes = messageBytes
        self.trustsOtherUsers = trustsOtherUsers
        self.acceptPatienceSeconds = acceptPatienceSeconds
        self.queuedSendsLimit = queuedSendsLimit
    }
}

/// Who is at the other end, as the kernel says (SO_PEERCRED, SCM_CREDENTIALS).
public struct ServicePeer: Sendable, Equatable, CustomStringConvertible {
    public let processID: Int32
    public let userID: UInt32
    public let groupID: UInt32

    init(_ credentials: PeerCredentials) {
        processID = credentials.pid
        userID = credentials.uid
        groupID = credentials.gid
    }

    public var description: String { "process \(processID) (uid \(userID))" }
}

/// The process's importance: a service that idles in the background clamps its own
/// work, and the requests of more urgent clients lift the clamp for their work only
/// (the Services article).
public enum ServiceImportance {
    /// Runs every later item, closure and job of this process at most at `qosClass`
    /// (nil: no clamp) — except the work of a request from a more urgent client, which
    /// runs at that client's QoS until its reply is sent and while what it submitted runs.
    public static func clampProcess(to qosClass: DispatchQoS.QoSClass?) { Runtime.clampWork(to: qosClass) }

    /// The class the process is clamped to, nil when none.
    public static var processClamp: DispatchQoS.QoSClass? { Runtime.workClamp }
}
