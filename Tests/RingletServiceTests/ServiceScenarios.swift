import Glibc
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletService

/// What a session does on either backend: `ServiceTests` runs each on the backend
/// this machine gives, and all of them again on epoll in a child process.
enum ServiceScenarios {
    static let all: [(String, @Sendable () throws -> Void)] = [
        ("aRequestGetsItsReplyAtTheSendersQoS", aRequestGetsItsReplyAtTheSendersQoS),
        ("messagesArriveInOrderWithTheirSender", messagesArriveInOrderWithTheirSender),
        ("aQueueOfHigherQoSWinsOverTheClaim", aQueueOfHigherQoSWinsOverTheClaim),
        ("aClaimAboveTheSendersPriorityIsClamped", aClaimAboveTheSendersPriorityIsClamped),
        ("aClaimThatCannotBeCheckedGetsDefault", aClaimThatCannotBeCheckedGetsDefault),
        ("aMalformedPacketEndsTheSessionNamingThePeer", aMalformedPacketEndsTheSessionNamingThePeer),
        ("anOversizedPacketEndsTheSession", anOversizedPacketEndsTheSession),
        ("aPeerThatGoesAwayFailsTheAwaitedReply", aPeerThatGoesAwayFailsTheAwaitedReply),
        ("aDroppedRequestIsAnsweredWithTheReason", aDroppedRequestIsAnsweredWithTheReason),
    ]

    /// A user-initiated sender: the handler runs at user-initiated (its queue has no
    /// QoS) in the sender's activity, the reply handler at the sender's QoS, the payload
    /// comes back.
    static func aRequestGetsItsReplyAtTheSendersQoS() throws {
        let handlerActivity = Delivered<UInt32>()
        let service = try EchoService { message in
            handlerActivity.put(Runtime.currentActivity)
            return message.payload
        }
        let session = try ServiceSession(endpoint: service.endpoint)
        let replies = Delivered<(String, DispatchQoS)>()
        let senderActivity = Delivered<UInt32>()
        DispatchQueue.global(qos: .userInitiated).async {
            senderActivity.put(Runtime.currentActivity)
            session.send(bytes("ping")) { result in
                replies.put(((try? result.get()).map { text($0.payload) } ?? "\(result)", Runtime.currentQoS))
            }
        }
        let message = try #require(service.messages.next())
        #expect(message.claimedQoS == .userInitiated)
        #expect(message.qos == .userInitiated)
        #expect(message.peer.processID == getpid())
        #expect(message.expectsReply)
        let reply = try #require(replies.next())
        #expect(reply.0 == "ping")
        #expect(reply.1 == .userInitiated)
        // The activity crossed: the handler's work is in the sender's activity.
        let sent = try #require(senderActivity.next())
        #expect(message.senderActivity == sent)
        #expect(handlerActivity.next() == sent)
        session.cancel()
    }

    /// Messages wanting no reply arrive in the order sent, each with the sending process.
    static func messagesArriveInOrderWithTheirSender() throws {
        let service = try EchoService()
        let session = try ServiceSession(endpoint: service.endpoint)
        for index in 0..<50 { try session.send(bytes("m\(index)")) }
        for index in 0..<50 {
            let message = try #require(service.messages.next())
            #expect(text(message.payload) == "m\(index)")
            #expect(!message.expectsReply)
            #expect(message.peer.processID == getpid())
            #expect(message.qos == .default, "a send from outside any item claims default")
        }
        session.cancel()
    }

    /// The handler runs at the higher of the granted QoS and its queue's (`.enforceQoS`).
    static func aQueueOfHigherQoSWinsOverTheClaim() throws {
        let ran = Delivered<DispatchQoS>()
        let queue = DispatchQueue(label: "test.service.handlers", qos: .userInitiated)
        let service = try EchoService(targetQueue: queue) { _ in
            ran.put(Runtime.currentQoS)
            return bytes("ok")
        }
        let session = try ServiceSession(endpoint: service.endpoint)
        let done = Delivered<Bool>()
        DispatchQueue.global(qos: .utility).async {
            session.send(bytes("low")) { done.put((try? $0.get()) != nil) }
        }
        #expect(ran.next() == .userInitiated)
        #expect(try #require(service.messages.next()).qos == .utility)
        #expect(done.next() == true)
        session.cancel()
    }

    /// A packet claiming user-interactive from a low-QoS worker's thread (SCHED_IDLE,
    /// nice 19 or the utility band's nice, as this machine's profile places background
    /// work) is granted what that thread's scheduling allows, below the claim.
    static func aClaimAboveTheSendersPriorityIsClamped() throws {
        let service = try EchoService { _ in nil }
        let backgroundThread = Delivered<Int32>()
        DispatchQueue.global(qos: .background).async { backgroundThread.put(Runtime.currentThreadID) }
        let threadID = try #require(backgroundThread.next())
        let raw = try RawPeer(service.endpoint)
        raw.send(ServiceHeader(kind: .message, qos: .userInteractive, id: 0, threadID: threadID, activity: 0,
                               payloadBytes: 0).packet(with: .empty))
        let message = try #require(service.messages.next())
        let ceiling = try #require(SenderCheck.ceiling(threadID: threadID, processID: getpid()))
        #expect(ServiceQoS.rank(ceiling) <= ServiceQoS.rank(.utility))
        #expect(message.claimedQoS == .userInteractive)
        #expect(message.qos == ceiling)
        raw.close()
    }

    /// A thread id that is no thread of the sending process: the claim gets at most default.
    static func aClaimThatCannotBeCheckedGetsDefault() throws {
        let service = try EchoService { _ in nil }
        let raw = try RawPeer(service.endpoint)
        for claim in [DispatchQoS.userInitiated, .utility] {
            raw.send(ServiceHeader(kind: .message, qos: claim, id: 0, threadID: 0x3FFF_FFF0, activity: 0,
                                   payloadBytes: 0).packet(with: .empty))
        }
        #expect(try #require(service.messages.next()).qos == .default)
        #expect(try #require(service.messages.next()).qos == .utility, "a claim below default is kept")
        raw.close()
    }

    /// Bytes that are no service packet end the session, once, with the sending process named.
    static func aMalformedPacketEndsTheSessionNamingThePeer() throws {
        let service = try EchoService()
        let raw = try RawPeer(service.endpoint)
        raw.send(bytes("GET / HTTP/1.1\r\n\r\n and more than thirty-two bytes"))
        let ending = try #require(service.endings.next())
        guard case .malformed(_, let peer, let reason) = ending else {
            Issue.record("ended with \(ending)")
            return
        }
        #expect(peer.contains("process \(getpid())"))
        #expect(reason.contains("RLS1"))
        #expect(raw.waitForEnd(), "the service closed its end")
        #expect(service.endings.count == 0)
        raw.close()
    }

    /// A peer sending more than the limit (ignoring its own side's check) is cut off,
    /// and the sender's side refuses a payload over the limit before it goes.
    static func anOversizedPacketEndsTheSession() throws {
        let options = ServiceOptions(messageBytes: 1024)
        let service = try EchoService(options: options)
        let session = try ServiceSession(endpoint: service.endpoint, options: options)
        let big = [UInt8](repeating: 7, count: 1025).withUnsafeBytes { DispatchData(bytes: $0) }
        #expect(throws: ServiceError.messageTooLarge(endpoint: service.endpoint.description, bytes: 1025, limit: 1024)) {
            try session.send(big)
        }
        let refused = Delivered<ServiceError>()
        session.send(big) { result in if case .failure(let error) = result { refused.put(error) } }
        #expect(refused.next() == .messageTooLarge(endpoint: service.endpoint.description, bytes: 1025, limit: 1024))
        let raw = try RawPeer(service.endpoint)
        raw.send(ServiceHeader(kind: .message, qos: .default, id: 0, threadID: 1, activity: 0, payloadBytes: 1025)
            .packet(with: big))
        let ending = try #require(service.endings.next())
        guard case .messageTooLarge(_, _, let limit) = ending else {
            Issue.record("ended with \(ending)")
            return
        }
        #expect(limit == 1024)
        raw.close()
        session.cancel()
    }

    /// The service's end closes mid-request: the awaited reply fails with the peer gone,
    /// the cancellation handler runs once, and later sends are refused with the reason.
    static func aPeerThatGoesAwayFailsTheAwaitedReply() throws {
        let service = try EchoService { _ in nil }
        let replies = Delivered<Result<ServiceMessage, ServiceError>>()
        let endings = Delivered<ServiceError>()
        let session = try ServiceSession(endpoint: service.endpoint, cancellationHandler: { endings.put($0) })
        session.send(bytes("never answered")) { replies.put($0) }
        let held = try #require(service.messages.next())
        try #require(service.sessions.next()).cancel()
        guard case .failure(.peerClosed) = try #require(replies.next()) else {
            Issue.record("the reply did not fail with the peer gone")
            return
        }
        guard case .peerClosed = try #require(endings.next()) else { return }
        session.cancel()
        #expect(throws: ServiceError.self) { try session.send(bytes("after")) }
        let fence = Delivered<Bool>()
        session.handlerQueue.async { fence.put(true) }
        _ = fence.next()
        #expect(endings.count == 0, "the cancellation handler ran once")
        #expect(throws: ServiceError.self) { try held.reply(bytes("late")) }
    }

    /// A request the handler lets go without replying is answered for it.
    static func aDroppedRequestIsAnsweredWithTheReason() throws {
        let service = try EchoService { _ in nil }
        let session = try ServiceSession(endpoint: service.endpoint)
        let replies = Delivered<Result<ServiceMessage, ServiceError>>()
        session.send(bytes("dropped")) { replies.put($0) }
        _ = try #require(service.messages.next())  // the test's reference goes here
        guard case .failure(.noReply(_, let reason)) = try #require(replies.next()) else {
            Issue.record("no noReply")
            return
        }
        #expect(reason.contains("without calling reply"))
        session.cancel()
    }
}

/// A peer that writes raw packets to an endpoint, as a broken or hostile client would.
final class RawPeer: @unchecked Sendable {
    let socket: RingSocket
    private let queue = DispatchQueue(label: "test.service.raw")

    init(_ endpoint: ServiceEndpoint) throws {
        socket = try RingSocket.open(family: SocketAddress.unixFamily, kind: .seqpacket)
        let connected = Delivered<Bool>()
        socket.connect(to: try endpoint.address(), queue: queue) { connected.put((try? $0.get()) != nil) }
        try #require(connected.next() == true)
    }

    func send(_ packet: DispatchData) {
        let sent = Delivered<Bool>()
        socket.send(packet, queue: queue) { sent.put((try? $0.get()) != nil) }
        #expect(sent.next() == true)
    }

    /// Whether the other end closed (a receive sees the end) within the patience.
    func waitForEnd() -> Bool {
        let ended = Delivered<Bool>()
        socket.receive(upTo: 4096, queue: queue) { result in
            switch result {
            case .success(let message): ended.put(message.endOfStream)
            case .failure: ended.put(true)
            }
        }
        return ended.next() == true
    }

    func close() { socket.close() }
}
