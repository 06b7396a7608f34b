import Glibc
@_spi(RingletNet) import Ringlet

/// A service's listening endpoint: one `ServiceSession` per client that connects,
/// handed to `incomingSessionHandler` on `targetQueue` (set its handlers there); the
/// session starts receiving once the handler returns. Mirrors `XPCListener`: it listens
/// until `cancel()`, whether or not the program keeps a reference.
///
/// A file endpoint whose socket file is stale (nothing listens on it) is replaced;
/// one another process serves is not (`ServiceError.socket`, address in use). The file
/// is made readable and writable by this user only unless `options.trustsOtherUsers`;
/// a client of another user is refused either way unless that option is set (each
/// refusal is printed, naming the process).
public final class ServiceListener: @unchecked Sendable {
    public let endpoint: ServiceEndpoint
    public let targetQueue: DispatchQueue
    public let options: ServiceOptions
    private let socket: RingSocket
    private let lane: DispatchQueue
    private let incomingSessionHandler: @Sendable (ServiceSession) -> Void
    private let registry = SessionRegistry()

    public init(endpoint: ServiceEndpoint, targetQueue: DispatchQueue = .global(),
                options: ServiceOptions = ServiceOptions(),
                incomingSessionHandler: @escaping @Sendable (ServiceSession) -> Void) throws(ServiceError) {
        self.endpoint = endpoint
        self.targetQueue = targetQueue
        self.options = options
        self.incomingSessionHandler = incomingSessionHandler
        socket = try Self.listen(on: endpoint, options: options)
        lane = DispatchQueue(label: "ringlet.service.listener \(endpoint)", qos: .userInitiated)
        lane.exemptFromWorkClamp()
        try? socket.setOption(.passCredentials, 1)
        // The accept holds the listener until `cancel()` ends it, as an XPC listener
        // lives until cancelled.
        socket.accept(queue: lane) { [self] event in take(event) }
    }

    /// Sessions open now.
    public var sessionCount: Int { registry.count }
    /// Clients refused because they belong to another user.
    public var refusedClients: Int { registry.refusedCount }

    /// Stops accepting, removes the socket file and cancels every open session.
    public func cancel() {
        guard let open = registry.close() else { return }
        socket.close()
        if let path = endpoint.filePath { unlink(path) }
        for session in open { session.cancel() }
    }

    private func take(_ event: AcceptEvent) {
        switch event {
        case .accepted(let connection):
            let peer: ServicePeer
            do {
                peer = ServicePeer(try connection.peerCredentials())
            } catch {
                serviceWarning("service \(endpoint): a client's credentials could not be read (\(error)); it was closed")
                return connection.close()
            }
            guard options.trustsOtherUsers || peer.userID == geteuid() else {
                registry.countRefused()
                serviceWarning("service \(endpoint): refused \(peer), of another user "
                    + "(set ServiceOptions.trustsOtherUsers to serve other users)")
                return connection.close()
            }
            let session = ServiceSession(socket: connection, peer: peer, endpointName: endpoint.description,
                                         targetQueue: targetQueue, options: options, registry: registry)
            guard registry.add(session) else { return session.cancel() }
            let handler = incomingSessionHandler
            targetQueue.async {
                handler(session)
                session.activate()
            }
        case .refused(let error):
            serviceWarning("service \(endpoint): accept failed (\(error)); still listening")
        case .ended(let error):
            if !error.isCancellation {
                serviceWarning("service \(endpoint): the listener stopped: \(error)")
            }
        }
    }

    /// Binds and listens; a stale socket file (connect refused) is removed first.
    private static func listen(on endpoint: ServiceEndpoint, options: ServiceOptions) throws(ServiceError) -> RingSocket {
        let address = try endpoint.address()
        let mode: mode_t = options.trustsOtherUsers ? 0o666 : 0o600
        do {
            let socket = try RingSocket.listening(on: address, kind: .seqpacket)
            if let path = endpoint.filePath { chmod(path, mode) }
            return socket
        } catch let error where error.errno == .addressInUse && endpoint.filePath != nil {
            let path = endpoint.filePath!
            switch probe(path) {
            case .stale:
                unlink(path)
            case .served(let process):
                let who = process.map { "process \($0)" } ?? "a process (of another PID namespace)"
                throw .socket(endpoint: endpoint.description, errno: .addressInUse,
                              reason: "\(error.call) on \(error.subject): EADDRINUSE; \(who) serves this socket "
                                  + "file (a connect to it was accepted): stop it, or pick another path")
            case .unknown(let call, let errno):
                throw .socket(endpoint: endpoint.description, errno: .addressInUse,
                              reason: "\(error.call) on \(error.subject): EADDRINUSE; whether a process still serves "
                                  + "the socket file is unknown (the probe's \(call) failed: \(errno.name)), so it "
                                  + "was left in place: remove it if no service runs, or pick another path")
            }
            do {
                let socket = try RingSocket.listening(on: address, kind: .seqpacket)
                chmod(path, mode)
                return socket
            } catch {
                throw .socket(endpoint.description, error)
            }
        } catch {
            throw .socket(endpoint.description, error)
        }
    }

    /// What a connect finds at a socket file: nothing listening (stale, or the file is
    /// gone), a listener (its process ID as the kernel gives it, nil when the listener
    /// is outside this process's PID namespace), or no answer (the failed call, its error).
    enum Probe: Equatable { case stale, served(Int32?), unknown(call: String, errno: Errno) }

    /// Whether something listens at the socket file `path`: a plain blocking connect,
    /// which a Unix socket answers at once (ECONNREFUSED when nothing listens), so the
    /// answer does not depend on how busy the ring is.
    static func probe(_ path: String) -> Probe {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            return .unknown(call: "connect", errno: .nameTooLong)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { for (index, byte) in bytes.enumerated() { $0[index] = byte } }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .unknown(call: "socket", errno: Errno(rawValue: errno)) }
        defer { Glibc.close(fd) }
        // errno is read inside, right after the call: on the way out a release (a free,
        // which ThreadSanitizer's allocator may answer with another errno) could change it.
        var failure = EINTR
        for _ in 0..<3 where failure == EINTR {  // a signal's handler ran first: ask again
            failure = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 ? 0 : errno
                }
            }
        }
        switch failure {
        case 0: return .served(listenerProcess(fd))
        case ECONNREFUSED, ENOENT: return .stale  // ENOENT: removed since the bind; bind again
        default: return .unknown(call: "connect", errno: Errno(rawValue: failure))
        }
    }

    /// The process that listens at the other end of the connected Unix socket `fd`
    /// (SO_PEERCRED gives the listener's credentials to a client); nil when unknown.
    private static func listenerProcess(_ fd: Int32) -> Int32? {
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0, credentials.pid > 0 else { return nil }
        return credentials.pid
    }
}

/// A listener's open sessions: each session holds it (to leave it when it ends), the
/// listener holds it (to cancel them all).
final class SessionRegistry: @unchecked Sendable {
    private let lock = ServiceLock()
    private var sessions: [ObjectIdentifier: ServiceSession] = [:]
    private var closed = false
    private var refused = 0

    var count: Int { lock.withLock { sessions.count } }
    var refusedCount: Int { lock.withLock { refused } }

    func countRefused() { lock.withLock { refused += 1 } }

    /// Keeps `session`; false once the listener was cancelled.
    func add(_ session: ServiceSession) -> Bool {
        lock.withLock {
            if closed { return false }
            sessions[ObjectIdentifier(session)] = session
            return true
        }
    }

    func forget(_ session: ServiceSession) {
        _ = lock.withLock { sessions.removeValue(forKey: ObjectIdentifier(session)) }
    }

    /// Closes the registry: the sessions open now, nil when it was closed already.
    func close() -> [ServiceSession]? {
        lock.withLock {
            if closed { return nil }
            closed = true
            defer { sessions = [:] }
            return Array(sessions.values)
        }
    }
}
