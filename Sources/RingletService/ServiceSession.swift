import Glibc
@_spi(RingletNet) import Ringlet

/// One connection between a client and a service, either end: messages as bytes, sent
/// with or without a reply wanted, each carrying the sending thread's QoS (checked and
/// granted by the other side, `SenderCheck`) and activity.
///
/// Mirrors `XPCSession` and `xpc_connection_*`: a client makes one with
/// `init(endpoint:…)`; a service gets one per client from its `ServiceListener`. The
/// `messageHandler` runs on `targetQueue` at the granted QoS (or the queue's, when
/// higher); the `cancellationHandler` runs once, when the session ends for any
/// reason — `cancel()`, the peer gone, a socket error, a malformed packet — and every
/// reply still awaited fails with that reason. Every socket call goes through the
/// runtime's ring (or its epoll backend): connect, `recvmsg` with the sender's
/// credentials, `sendmsg`.
public final class ServiceSession: @unchecked Sendable {
    /// Who is at the other end (at connect time; each message says again who sent it).
    public let peer: ServicePeer
    /// Where the handlers run: on `handlerQueue`, a serial queue of this session's
    /// that targets it, so messages are handled one at a time in the order they came
    /// and the cancellation handler runs after the last.
    public let targetQueue: DispatchQueue
    let handlerQueue: DispatchQueue
    public let options: ServiceOptions
    let endpointName: String
    let socket: RingSocket

    private let lock = ServiceLock()
    private var state = State()
    /// The open sessions of the listener that accepted this one (nil for a client),
    /// told when it ends. Not the listener itself: a program's session handler that
    /// keeps its sessions would then hold the listener in a cycle.
    private let registry: SessionRegistry?

    struct State {
        var messageHandler: (@Sendable (ServiceMessage) -> Void)?
        var cancellationHandler: (@Sendable (ServiceError) -> Void)?
        var pending: [UInt64: PendingReply] = [:]
        var nextID: UInt64 = 1
        var ended: ServiceError?
        var activated = false
        var droppedMessages = 0
        /// Packets handed to the socket and not yet taken by the kernel.
        var queuedSends = 0
    }

    struct PendingReply {
        let qos: DispatchQoS
        let handler: @Sendable (Result<ServiceMessage, ServiceError>) -> Void
    }

    /// Connects to the service at `endpoint`. Throws when nothing listens there
    /// (`ServiceError.socket`, naming the path), when the service belongs to another
    /// user, or when it does not accept within `options.acceptPatienceSeconds`.
    public convenience init(endpoint: ServiceEndpoint, targetQueue: DispatchQueue = .global(),
                            options: ServiceOptions = ServiceOptions(),
                            messageHandler: (@Sendable (ServiceMessage) -> Void)? = nil,
                            cancellationHandler: (@Sendable (ServiceError) -> Void)? = nil) throws(ServiceError) {
        let socket = try Self.connect(to: endpoint, options: options)
        let peer: ServicePeer
        do {
            peer = ServicePeer(try socket.peerCredentials())
        } catch {
            socket.close()
            throw .socket(endpoint.description, error)
        }
        guard options.trustsOtherUsers || peer.userID == geteuid() else {
            socket.close()
            throw .ownedByAnotherUser(endpoint: endpoint.description, uid: peer.userID)
        }
        self.init(socket: socket, peer: peer, endpointName: endpoint.description, targetQueue: targetQueue,
                  options: options, registry: nil)
        setMessageHandler(messageHandler)
        setCancellationHandler(cancellationHandler)
        activate()
    }

    init(socket: RingSocket, peer: ServicePeer, endpointName: String, targetQueue: DispatchQueue,
         options: ServiceOptions, registry: SessionRegistry?) {
        self.socket = socket
        self.peer = peer
        self.endpointName = endpointName
        self.targetQueue = targetQueue
        self.options = options
        self.registry = registry
        handlerQueue = DispatchQueue(label: "ringlet.service.handlers \(endpointName)", target: targetQueue)
        try? socket.setOption(.passCredentials, 1)
    }

    /// What runs for each message that arrives (a request, or a message wanting no reply).
    public func setMessageHandler(_ handler: (@Sendable (ServiceMessage) -> Void)?) {
        lock.withLock { state.messageHandler = handler }
    }

    /// What runs once when the session ends, with the reason.
    public func setCancellationHandler(_ handler: (@Sendable (ServiceError) -> Void)?) {
        lock.withLock { state.cancellationHandler = handler }
    }

    /// Why the session ended, nil while it runs.
    public var endReason: ServiceError? { lock.withLock { state.ended } }

    /// Ends the session: the cancellation handler runs with `.cancelled`, awaited
    /// replies fail, the socket closes. Harmless when already ended.
    public func cancel() {
        end(.cancelled(endpoint: endpointName))
    }

    /// Starts receiving (a listener's sessions start once its handler has returned).
    func activate() {
        let start = lock.withLock { () -> Bool in
            if state.activated || state.ended != nil { return false }
            state.activated = true
            return true
        }
        if start { receiveNext() }
    }

    // MARK: Sending

    /// Sends `payload`, wanting no reply. Throws when it is over the size limit or the
    /// session has ended; a failure of the socket later ends the session (its
    /// cancellation handler says why).
    public func send(_ payload: DispatchData) throws(ServiceError) {
        try sendPacket(kind: .message, id: 0, payload: payload) {}
    }

    /// Sends `payload` as a request: `replyHandler` runs once on `targetQueue`, at the
    /// QoS this thread sends at, with the reply or why none came.
    public func send(_ payload: DispatchData, replyHandler: @escaping @Sendable (Result<ServiceMessage, ServiceError>) -> Void) {
        let qos = Self.sendingQoS()
        let id: UInt64
        switch lock.withLock({ () -> Result<UInt64, ServiceError> in
            if let ended = state.ended { return .failure(ended) }
            let id = state.nextID
            state.nextID += 1
            state.pending[id] = PendingReply(qos: qos, handler: replyHandler)
            return .success(id)
        }) {
        case .failure(let error):
            return handlerQueue.async(qos: qos) { replyHandler(.failure(error)) }
        case .success(let taken):
            id = taken
        }
        do {
            try sendPacket(kind: .request, id: id, payload: payload) {}
        } catch {
            if let pending = lock.withLock({ state.pending.removeValue(forKey: id) }) {
                handlerQueue.async(qos: qos) { pending.handler(.failure(error)) }
            }
        }
    }

    /// Builds the packet (header with this thread's QoS, id and activity) and sends it;
    /// `sent` runs on the manager thread once the kernel took it (it must be short).
    func sendPacket(kind: ServiceHeader.Kind, id: UInt64, payload: DispatchData,
                    sent: @escaping () -> Void) throws(ServiceError) {
        guard payload.count <= options.messageBytes else {
            throw .messageTooLarge(endpoint: endpointName, bytes: payload.count, limit: options.messageBytes)
        }
        let refusal = lock.withLock { () -> ServiceError? in
            if let ended = state.ended { return ended }
            // A peer that stops reading fills the socket buffer; the sends after it wait
            // on the ring, up to this many (with those not yet on it), then are refused
            // rather than piled up.
            guard state.queuedSends < options.queuedSendsLimit else {
                return .sendQueueFull(endpoint: endpointName, peer: peer.description, queued: state.queuedSends)
            }
            state.queuedSends += 1
            return nil
        }
        if let refusal { throw refusal }
        let header = ServiceHeader(kind: kind, qos: Self.sendingQoS(), id: id, threadID: Runtime.currentThreadID,
                                   activity: Runtime.currentActivity, payloadBytes: UInt32(payload.count))
        socket.send(header.packet(with: payload), handlerOnManager: { [self] result in
            lock.withLock { state.queuedSends -= 1 }
            switch result {
            case .success: sent()
            case .failure(let error):
                if !error.isCancellation { end(.socket(endpointName, error)) }
            }
        })
    }

    /// Tells the sender of request `id` that no reply comes, and why.
    func sendFailure(to id: UInt64, reason: String, boost: ImportanceBoost?) {
        var bytes = Array(reason.utf8.prefix(options.messageBytes))
        let payload = bytes.withUnsafeMutableBytes { DispatchData(bytes: UnsafeRawBufferPointer($0)) }
        try? sendPacket(kind: .failure, id: id, payload: payload) { boost?.end() }
    }

    /// The QoS a send from this thread claims: its work's, default outside any.
    static func sendingQoS() -> DispatchQoS {
        let qos = Runtime.currentQoS
        return qos.qosClass == .unspecified ? .default : qos
    }

    func messageHandlerIfAny() -> (@Sendable (ServiceMessage) -> Void)? { lock.withLock { state.messageHandler } }

    func takePending(_ id: UInt64) -> PendingReply? { lock.withLock { state.pending.removeValue(forKey: id) } }

    func lockedDropCount() -> Int {
        lock.withLock {
            state.droppedMessages += 1
            return state.droppedMessages
        }
    }

    /// Packets sent and not yet taken by the kernel (waiting for room in a full socket buffer).
    public var queuedSends: Int { lock.withLock { state.queuedSends } }

    /// Messages that arrived with no handler set and were dropped (each reported).
    public var droppedMessages: Int { lock.withLock { state.droppedMessages } }

    // MARK: Ending

    func end(_ reason: ServiceError) {
        guard let taken = lock.withLock({ () -> (State)? in
            if state.ended != nil { return nil }
            let taken = state
            state.ended = reason
            state.pending = [:]
            state.messageHandler = nil
            state.cancellationHandler = nil
            return taken
        }) else { return }
        socket.close()
        for pending in taken.pending.values {
            handlerQueue.async(qos: pending.qos) { pending.handler(.failure(reason)) }
        }
        if let handler = taken.cancellationHandler { handlerQueue.async { handler(reason) } }
        registry?.forget(self)
    }

    // MARK: Connecting

    private static func connect(to endpoint: ServiceEndpoint, options: ServiceOptions) throws(ServiceError) -> RingSocket {
        let address = try endpoint.address()
        let socket: RingSocket
        do {
            socket = try RingSocket.open(family: SocketAddress.unixFamily, kind: .seqpacket)
        } catch {
            throw .socket(endpoint.description, error)
        }
        let outcome = ConnectOutcome()
        socket.connect(to: address, queue: .global(qos: .userInitiated)) { outcome.finish($0) }
        guard let result = outcome.wait(seconds: options.acceptPatienceSeconds) else {
            socket.close()
            throw .notAccepting(endpoint: endpoint.description, seconds: options.acceptPatienceSeconds)
        }
        if case .failure(let error) = result {
            socket.close()
            throw .socket(endpoint.description, error)
        }
        return socket
    }
}

/// A connect's result, waited for with a bound.
private final class ConnectOutcome: @unchecked Sendable {
    private let lock = ServiceLock()
    private var result: Result<Void, SocketError>?
    private let done = DispatchSemaphore(value: 0)

    func finish(_ result: Result<Void, SocketError>) {
        lock.withLock { self.result = result }
        done.signal()
    }

    func wait(seconds: Int) -> Result<Void, SocketError>? {
        guard done.wait(timeout: .now() + .seconds(seconds)) == .success else { return nil }
        return lock.withLock { result }
    }
}
