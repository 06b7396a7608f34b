import Glibc
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletService

/// Sessions and listeners (Sources/RingletService) on this machine's backend and on epoll.
@Suite struct ServiceTests {
    @Test(arguments: ServiceScenarios.all.map(\.0))
    func scenario(_ name: String) throws {
        try #require(ServiceScenarios.all.first { $0.0 == name }).1()
    }

    @Test func everyScenarioOnEpoll() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            do throws(RuntimeError) {
                try Runtime.start(configuration: RuntimeConfiguration(cores: 2, backend: .epoll))
            } catch {
                Issue.record("Runtime.start failed: \(error)")
                exit(1)
            }
            #expect(Runtime.current.statistics.backend == .epoll)
            for (name, scenario) in ServiceScenarios.all {
                do { try scenario() } catch {
                    serviceWarning("\(name) on epoll: \(error)")
                    exit(1)
                }
            }
            settleSockets()
        }
        reportChildErrors(result)
    }

    /// End to end: a thread at nice 19 sends from outside any item (it claims default,
    /// or user-interactive on the main thread); the service grants background.
    @Test func aSenderAtNice19IsGrantedBackground() async {
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let service = try EchoService { _ in nil }
            let session = try ServiceSession(endpoint: service.endpoint)
            #expect(setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(Runtime.currentThreadID), 19) == 0)
            try session.send(bytes("from a demoted main thread"))
            let message = try #require(service.messages.next())
            #expect(ServiceQoS.rank(message.claimedQoS) >= ServiceQoS.rank(.default))
            #expect(message.qos == .background)
            #expect(message.senderThreadID == Runtime.currentThreadID)
            session.cancel()
            service.listener.cancel()
            settleSockets()
        }
    }

    /// A client process that dies mid-request: the service's session ends with the
    /// peer gone (once), the held request's reply is refused, and its boost ends.
    @Test func aClientProcessThatDiesMidRequestEndsItsSession() async throws {
        let endpoint = ServiceEndpoint.abstract("ringlet-test.death.\(getpid())")
        let holding = Delivered<ServiceMessage>()
        let endings = Delivered<ServiceError>()
        let listener = try ServiceListener(endpoint: endpoint) { session in
            session.setMessageHandler { message in
                try? session.send(bytes("got it"))
                holding.put(message)
            }
            session.setCancellationHandler { endings.put($0) }
        }
        defer { listener.cancel() }
        let result = await #expect(processExitsWith: .exitCode(3), observing: [\.standardErrorContent]) {
            let heard = Delivered<String>()
            let session = try ServiceSession(endpoint: .abstract("ringlet-test.death.\(getppid())"),
                                             messageHandler: { heard.put(text($0.payload)) })
            session.send(bytes("hold this")) { _ in }
            #expect(heard.next() == "got it")
            _exit(3)  // no exit handlers, no leak check: a process that dies
        }
        reportChildErrors(result, expected: .exitCode(3))
        let held = try #require(holding.next())
        guard case .peerClosed(_, let peer) = try #require(endings.next()) else { return }
        #expect(peer.contains("process \(held.peer.processID)"))
        #expect(throws: ServiceError.self) { try held.reply(bytes("too late")) }
        #expect(eventually { listener.sessionCount == 0 })
    }

    /// The size limit's default is the profile's `serviceMessageBytes`.
    @Test func theSizeLimitIsTheProfilesKey() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            var configuration = RuntimeConfiguration(cores: 2)
            configuration.serviceMessageBytes = 2048
            do throws(RuntimeError) { try Runtime.start(configuration: configuration) } catch {
                Issue.record("Runtime.start failed: \(error)")
                return
            }
            #expect(ServiceOptions().messageBytes == 2048)
            let service = try EchoService()
            let session = try ServiceSession(endpoint: service.endpoint)
            let limit = [UInt8](repeating: 3, count: 2048).withUnsafeBytes { DispatchData(bytes: $0) }
            var over = limit
            over.append(bytes("!"))
            #expect(throws: ServiceError.messageTooLarge(endpoint: service.endpoint.description, bytes: 2049, limit: 2048)) {
                try session.send(over)
            }
            try session.send(limit)
            #expect(service.messages.next()?.payload.count == 2048)
            session.cancel()
            service.listener.cancel()
            settleSockets()
        }
        reportChildErrors(result)
    }

    /// A peer that does not read: once its buffer is full and the limit of waiting sends
    /// is reached, a send is refused naming the peer; nothing waits without a bound.
    @Test func aPeerThatDoesNotReadRefusesSendsPastTheLimit() throws {
        let endpoint = uniqueEndpoint()
        // A listener that accepts and never reads.
        let listener = try RingSocket.listening(on: try endpoint.address(), kind: .seqpacket)
        let accepted = Delivered<RingSocket>()
        listener.accept(queue: DispatchQueue(label: "test.service.deaf")) { event in
            if case .accepted(let connection) = event { accepted.put(connection) }
        }
        defer { listener.close() }
        let session = try ServiceSession(endpoint: endpoint, options: ServiceOptions(queuedSendsLimit: 8))
        // Accepted first: an unaccepted connection's buffer grows once it is taken.
        let connection = try #require(accepted.next())
        let payload = [UInt8](repeating: 5, count: 4096).withUnsafeBytes { DispatchData(bytes: $0) }
        var refusal: ServiceError?
        for _ in 0..<10_000 {
            do { try session.send(payload) } catch {
                refusal = error
                break
            }
            if refusal != nil { break }
        }
        guard case .sendQueueFull(_, let peer, let queued)? = refusal else {
            Issue.record("10,000 sends to a peer that does not read were all taken: \(String(describing: refusal))")
            return
        }
        #expect(queued == 8)
        #expect(peer.contains("process \(getpid())"))
        #expect(session.queuedSends <= 8)
        session.cancel()
        connection.close()
    }

    @Test func theAwaitingFormReturnsTheReply() async throws {
        let service = try EchoService()
        let session = try ServiceSession(endpoint: service.endpoint)
        let reply = try await session.sendWithReply(bytes("async"))
        #expect(text(reply.payload) == "async")
        session.cancel()
    }

    @Test func anEndpointWithNothingThereNamesItself() throws {
        try withPrivateFolder { folder in
            let path = folder + "/nothing-here"
            do {
                _ = try ServiceSession(endpoint: .path(path))
                Issue.record("connected to nothing")
            } catch let error as ServiceError {
                guard case .socket(let endpoint, let errno, let reason) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(endpoint == path)
                #expect(errno == .noSuchFile)
                #expect(reason.contains("start the service first"))
            }
        }
        do {
            _ = try ServiceSession(endpoint: .abstract("ringlet-test-\(getpid())-\(runMark)-nobody"))
            Issue.record("connected to nobody")
        } catch {
            guard case .socket(_, let errno, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(errno == .connectionRefused)
        }
    }

    /// A file endpoint: the socket file is this user's alone, a stale one is replaced,
    /// one that is served is not, and cancel removes it. (In a folder of its own: a
    /// process of another run may share /tmp and this one's process ID.)
    @Test func aFileEndpointReplacesAStaleSocketButNotALiveOne() throws {
        try withPrivateFolder { folder in
            let path = folder + "/file.sock"
            let first = try ServiceListener(endpoint: .path(path)) { _ in }
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            do {
                _ = try ServiceListener(endpoint: .path(path)) { _ in }
                Issue.record("a second listener took a live endpoint")
            } catch let error as ServiceError {
                guard case .socket(_, let errno, let reason) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(errno == .addressInUse)
                #expect(reason.contains("process \(getpid()) serves this socket file"), "\(reason)")
                #expect(error.description.hasPrefix("service \(path): bind on socket"), "\(error)")
            }
            first.cancel()
            #expect(access(path, F_OK) != 0, "cancel removed the socket file")
            // A stale file: a socket bound, listening and closed without removing it. It is
            // stale once the manager has closed it and no process another test spawns at
            // that moment still holds a copy of this one's descriptors (until its exec,
            // close-on-exec or not), which keeps the socket listening.
            try RingSocket.listening(on: try SocketAddress.unix(path: path), kind: .seqpacket).close()
            #expect(eventually { ServiceListener.probe(path) == .stale })
            let second = try ServiceListener(endpoint: .path(path)) { _ in }
            #expect(ServiceListener.probe(path) == .served(getpid()))
            let session = try ServiceSession(endpoint: .path(path))
            session.cancel()
            second.cancel()
        }
    }

    /// The probe of a socket file: a missing file counts as stale (bind again); one it
    /// cannot reach answers with the call that failed and its error (the listener then
    /// leaves the file and names both).
    @Test func theProbeOfAMissingOrUnreachableSocketFileSaysWhatItFound() throws {
        try withPrivateFolder { folder in
            #expect(ServiceListener.probe(folder + "/gone.sock") == .stale)
            let plain = folder + "/plain"
            let fd = open(plain, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            close(fd)
            #expect(ServiceListener.probe(plain + "/under.sock") == .unknown(call: "connect", errno: Errno(rawValue: ENOTDIR)))
        }
    }

    /// A session whose handler is not set: a request is answered with the reason, a
    /// message is counted as dropped (and printed).
    @Test func withoutAHandlerNothingIsLostSilently() throws {
        let endpoint = uniqueEndpoint()
        let sessions = Delivered<ServiceSession>()
        let listener = try ServiceListener(endpoint: endpoint) { sessions.put($0) }
        defer { listener.cancel() }
        let session = try ServiceSession(endpoint: endpoint)
        let replies = Delivered<Result<ServiceMessage, ServiceError>>()
        try session.send(bytes("lost?"))
        session.send(bytes("answer?")) { replies.put($0) }
        guard case .failure(.noReply(_, let reason)) = try #require(replies.next()) else {
            Issue.record("the request was not answered")
            return
        }
        #expect(reason.contains("no message handler"))
        let serverSide = try #require(sessions.next())
        #expect(serverSide.droppedMessages == 1)
        session.cancel()
    }

    /// Wire format: what `packet` writes, `parse` reads back; each broken field is named.
    @Test func theHeaderRoundTripsAndNamesWhatIsWrong() throws {
        let header = ServiceHeader(kind: .request, qos: DispatchQoS(qosClass: .utility, relativePriority: -3),
                                   id: 0x1_0000_0002, threadID: 4242, activity: 77, payloadBytes: 3)
        let packet = header.packet(with: bytes("abc"))
        #expect(packet.count == ServiceHeader.size + 3)
        #expect(try ServiceHeader.parse(packet).get() == header)
        var wrongKind = Array(packet)
        wrongKind[4] = 9
        #expect(reason(wrongKind)?.contains("kind 9") == true)
        var wrongLength = Array(packet)
        wrongLength[24] = 4
        #expect(reason(wrongLength)?.contains("announcing 4 payload bytes") == true)
        #expect(reason([1, 2, 3])?.contains("shorter than") == true)
    }

    private func reason(_ raw: [UInt8]) -> String? {
        let data = raw.withUnsafeBytes { DispatchData(bytes: $0) }
        if case .failure(let malformed) = ServiceHeader.parse(data) { return malformed.reason }
        return nil
    }
}
