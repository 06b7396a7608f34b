import CRinglet
import Glibc
import Testing
@_spi(RingletNet) @testable import Ringlet

/// The socket layer's behaviours, run in the test process (io_uring, or whatever the
/// machine allows) and in a child process on the epoll backend (SocketTests.swift).
enum SocketScenarios {
    static let all: [(String, @Sendable () throws -> Void)] = [
        ("tcpEchoWithHalfClose", tcpEchoWithHalfClose),
        ("oneAcceptTakesManyConnections", oneAcceptTakesManyConnections),
        ("packetsKeepTheirEdgesAndCarryCredentials", packetsKeepTheirEdgesAndCarryCredentials),
        ("descriptorsPassOverAUnixSocket", descriptorsPassOverAUnixSocket),
        ("receivesWaitingTogetherEndInOrder", receivesWaitingTogetherEndInOrder),
        ("aRefusedConnectNamesTheAddress", aRefusedConnectNamesTheAddress),
        ("aPeerThatResetsFailsTheReceiveAndTheSend", aPeerThatResetsFailsTheReceiveAndTheSend),
        ("closeCancelsWhatIsUnderWayThenClosesTheDescriptor", closeCancelsWhatIsUnderWayThenClosesTheDescriptor),
        ("aCancelledReceiveLeavesTheSocketUsable", aCancelledReceiveLeavesTheSocketUsable),
        ("aSeqpacketListenerOnAnAbstractName", aSeqpacketListenerOnAnAbstractName),
    ]

    /// A client sends 192 KiB in one send of three regions and shuts its side; the
    /// server echoes until it sees the end, then shuts its own; the client reads it all
    /// back: a stream's send goes out whole, in order, and half-close works both ways.
    static func tcpEchoWithHalfClose() throws {
        let (listener, address) = try loopbackListener()
        let queue = DispatchQueue(label: "test.net.echo")
        let served = Outcome<Result<[UInt8], SocketError>>()
        listener.accept(queue: queue) { event in
            guard case .accepted(let connection) = event else { return }
            receiveAll(connection, queue: queue) { received in
                guard case .success(let bytes) = received else { return served.set(received) }
                var data = DispatchData.empty
                bytes.withUnsafeBytes { data.append($0) }
                connection.send(data, queue: queue) { _ in }
                connection.shutdown(.write, queue: queue) { _ in
                    served.set(received)
                    connection.close()
                }
            }
        }
        let client = try RingSocket.open(family: address.family, kind: .stream)
        let connected = Outcome<Result<Void, SocketError>>()
        client.connect(to: address, queue: queue) { connected.set($0) }
        guard case .success = try #require(connected.wait()) else { Issue.record("connect failed"); return }
        let (data, bytes) = patternData(192 * 1024)
        let sent = Outcome<Result<Int, SocketError>>()
        client.send(data, queue: queue) { sent.set($0) }
        client.shutdown(.write, queue: queue) { _ in }
        let echoed = Outcome<Result<[UInt8], SocketError>>()
        receiveAll(client, queue: queue) { echoed.set($0) }
        if case .success(let count) = try #require(sent.wait()) { #expect(count == bytes.count) }
        else { Issue.record("the send failed") }
        guard case .success(let back) = try #require(echoed.wait()) else { Issue.record("the echo failed"); return }
        let same = back == bytes  // not in the expectation: it would print 192 KiB
        #expect(same, "\(back.count) of \(bytes.count) bytes came back, or out of order")
        if case .success(let got) = try #require(served.wait()) { #expect(got.count == bytes.count) }
        client.close()
        listener.close()
    }

    /// Twenty clients connect; one accept hands over twenty connections, then its
    /// cancellation ends it with exactly one `.ended`, last.
    static func oneAcceptTakesManyConnections() throws {
        let (listener, address) = try loopbackListener()
        let queue = DispatchQueue(label: "test.net.accept")
        let events = Recorder<String>()
        let accepted = AtomicCounter()
        let ended = DispatchSemaphore(value: 0)
        let request = listener.accept(queue: queue) { event in
            switch event {
            case .accepted(let connection):
                events.append("accepted")
                accepted.increment()
                connection.close()
            case .refused(let error): events.append("refused \(error)")
            case .ended(let error):
                events.append(error.isCancellation ? "ended" : "ended \(error)")
                ended.signal()
            }
        }
        var clients: [RingSocket] = []
        for _ in 0..<20 {
            let client = try RingSocket.open(family: address.family, kind: .stream)
            client.connect(to: address, queue: queue) { _ in }
            clients.append(client)
        }
        #expect(eventually { accepted.value == 20 }, "\(accepted.value) of 20 connections accepted")
        request.cancel()
        #expect(waited(ended))
        #expect(events.values == Array(repeating: "accepted", count: 20) + ["ended"])
        clients.forEach { $0.close() }
        listener.close()
    }

    /// SOCK_SEQPACKET: two sends are two receives; the sender's credentials arrive as
    /// control data and match the process; a message longer than the buffer is marked.
    static func packetsKeepTheirEdgesAndCarryCredentials() throws {
        let (a, b) = try RingSocket.pair(kind: .seqpacket)
        try b.setOption(.passCredentials, 1)
        let queue = DispatchQueue(label: "test.net.packets")
        let first = Outcome<Result<Int, SocketError>>()
        a.send(data("hello"), control: [.ownCredentials], queue: queue) { first.set($0) }
        a.send(data("packet two"), queue: queue) { _ in }
        if case .success(let count) = try #require(first.wait()) { #expect(count == 5) }
        let room = RingSocket.controlSpace(forBytes: SocketCalls.credentialsBytes)
        let one = Outcome<Result<ReceivedMessage, SocketError>>()
        b.receive(upTo: 64, controlBytes: room, queue: queue) { one.set($0) }
        guard case .success(let message) = try #require(one.wait()) else { Issue.record("receive failed"); return }
        #expect(Array(message.data) == Array("hello".utf8))
        let credentials = message.control.compactMap(\.credentials).first
        #expect(credentials == PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
        #expect(!message.truncated && !message.controlTruncated)
        let two = Outcome<Result<ReceivedMessage, SocketError>>()
        b.receive(upTo: 6, controlBytes: room, queue: queue) { two.set($0) }
        guard case .success(let cut) = try #require(two.wait()) else { Issue.record("receive failed"); return }
        #expect(Array(cut.data) == Array("packet".utf8) && cut.truncated, "a packet longer than the buffer is marked")
        a.close()
        let end = Outcome<Result<ReceivedMessage, SocketError>>()
        b.receive(upTo: 64, queue: queue) { end.set($0) }
        if case .success(let last) = try #require(end.wait()) { #expect(last.endOfStream) }
        b.close()
    }

    /// SCM_RIGHTS: the receiver gets its own descriptor of a pipe and reads from it.
    static func descriptorsPassOverAUnixSocket() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        let queue = DispatchQueue(label: "test.net.rights")
        a.send(data("x"), control: [.descriptors([pipeEnds[0]])], queue: queue) { _ in }
        let got = Outcome<Result<ReceivedMessage, SocketError>>()
        b.receive(upTo: 8, controlBytes: RingSocket.controlSpace(forBytes: 4), queue: queue) { got.set($0) }
        guard case .success(let message) = try #require(got.wait()) else { Issue.record("receive failed"); return }
        let passed = message.control.flatMap(\.descriptors)
        try #require(passed.count == 1)
        #expect(passed[0] != pipeEnds[0])
        #expect(write(pipeEnds[1], "ok", 2) == 2)
        var buffer = [UInt8](repeating: 0, count: 2)
        #expect(read(passed[0], &buffer, 2) == 2 && buffer == Array("ok".utf8))
        [pipeEnds[0], pipeEnds[1], passed[0]].forEach { _ = Glibc.close($0) }
        a.close()
        b.close()
    }

    /// Three receives asked before any data: the three packets reach them in order.
    static func receivesWaitingTogetherEndInOrder() throws {
        let (a, b) = try RingSocket.pair(kind: .seqpacket)
        let queue = DispatchQueue(label: "test.net.order")
        let got = Recorder<String>()
        let all = DispatchGroup()
        for _ in 0..<3 {
            all.enter()
            b.receive(upTo: 16, queue: queue) { result in
                if case .success(let message) = result { got.append(String(decoding: Array(message.data), as: UTF8.self)) }
                all.leave()
            }
        }
        for word in ["one", "two", "three"] { a.send(data(word), queue: queue) { _ in } }
        #expect(waited(all))
        #expect(got.values == ["one", "two", "three"])
        a.close()
        b.close()
    }

    /// Nothing listens at the address: the connect fails with ECONNREFUSED and its
    /// error names the address and what to do.
    static func aRefusedConnectNamesTheAddress() throws {
        let (listener, address) = try loopbackListener()
        listener.close()  // the port is free now, and nothing listens there
        let closed = DispatchSemaphore(value: 0)
        let probe = try RingSocket.open(family: SocketAddress.inetFamily, kind: .stream)
        probe.close { closed.signal() }
        #expect(waited(closed))
        let client = try RingSocket.open(family: address.family, kind: .stream)
        let outcome = Outcome<Result<Void, SocketError>>()
        client.connect(to: address, queue: DispatchQueue(label: "test.net.refused")) { outcome.set($0) }
        guard case .failure(let error) = try #require(outcome.wait()) else { Issue.record("connected?"); return }
        #expect(error.errno == .connectionRefused)
        #expect(error.description.contains("connect on socket") && error.description.contains("\(address)")
                && error.description.contains("nothing listens there"), "\(error)")
        client.close()
    }

    /// The server closes a connection with unread bytes (Linux sends a reset): the
    /// client's receive fails with ECONNRESET, and a send after it fails — with an
    /// error, not SIGPIPE.
    static func aPeerThatResetsFailsTheReceiveAndTheSend() throws {
        let (listener, address) = try loopbackListener()
        let queue = DispatchQueue(label: "test.net.reset")
        let serverHasBytes = DispatchSemaphore(value: 0)
        listener.accept(queue: queue) { event in
            guard case .accepted(let connection) = event else { return }
            // Waits for the bytes to be there, reads none of them, and closes.
            DispatchQueue.global().async {
                #expect(eventually { ((try? Descriptors.readableBytes(connection.fileDescriptor)) ?? 0) > 0 })
                connection.close()
                serverHasBytes.signal()
            }
        }
        let client = try RingSocket.open(family: address.family, kind: .stream)
        let connected = Outcome<Result<Void, SocketError>>()
        client.connect(to: address, queue: queue) { connected.set($0) }
        _ = connected.wait()
        let received = Outcome<Result<ReceivedMessage, SocketError>>()
        client.send(data("unread"), queue: queue) { _ in }
        #expect(waited(serverHasBytes))
        client.receive(upTo: 64, queue: queue) { received.set($0) }
        guard case .failure(let error) = try #require(received.wait()) else { Issue.record("no reset"); return }
        #expect(error.errno == .connectionReset, "\(error)")
        let sent = Outcome<Result<Int, SocketError>>()
        client.send(data("after"), queue: queue) { sent.set($0) }
        guard case .failure(let sendError) = try #require(sent.wait()) else { Issue.record("sent?"); return }
        #expect(sendError.errno == .brokenPipe || sendError.errno == .connectionReset, "\(sendError)")
        client.close()
        listener.close()
    }

    /// `close()` with a receive on the ring and two waiting: all three get a
    /// cancellation, then the close handler runs and the descriptor is gone; a
    /// request asked afterwards is cancelled at once.
    static func closeCancelsWhatIsUnderWayThenClosesTheDescriptor() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let queue = DispatchQueue(label: "test.net.close")
        let events = Recorder<String>()
        for index in 0..<3 {
            b.receive(upTo: 8, queue: queue) { result in
                if case .failure(let error) = result, error.isCancellation { events.append("cancelled \(index)") }
                else { events.append("other \(index)") }
            }
        }
        let closed = DispatchSemaphore(value: 0)
        let fd = b.fileDescriptor
        b.close(queue: queue) {
            events.append("closed, descriptor \(Descriptors.isOpen(fd) ? "open" : "gone")")
            closed.signal()
        }
        #expect(waited(closed))
        let values = events.values
        #expect(Set(values.prefix(3)) == ["cancelled 0", "cancelled 1", "cancelled 2"], "\(values)")
        #expect(values.last == "closed, descriptor gone", "\(values)")
        let late = Outcome<Result<ReceivedMessage, SocketError>>()
        b.receive(upTo: 8, queue: queue) { late.set($0) }
        if case .failure(let error) = try #require(late.wait()) { #expect(error.isCancellation) }
        else { Issue.record("a receive on a closed socket ran") }
        a.close()
    }

    /// One receive cancelled: it ends with a cancellation, and the next receive gets
    /// the bytes sent afterwards.
    static func aCancelledReceiveLeavesTheSocketUsable() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let queue = DispatchQueue(label: "test.net.cancel")
        let first = Outcome<Result<ReceivedMessage, SocketError>>()
        let request = b.receive(upTo: 8, queue: queue) { first.set($0) }
        request.cancel()
        if case .failure(let error) = try #require(first.wait()) { #expect(error.isCancellation) }
        else { Issue.record("the cancelled receive got bytes") }
        let second = Outcome<Result<ReceivedMessage, SocketError>>()
        b.receive(upTo: 8, queue: queue) { second.set($0) }
        a.send(data("after"), queue: queue) { _ in }
        if case .success(let message) = try #require(second.wait()) { #expect(Array(message.data) == Array("after".utf8)) }
        else { Issue.record("the second receive failed") }
        a.close()
        b.close()
    }

    /// A SOCK_SEQPACKET listener on an abstract Unix name: a client connects, and
    /// each side sees the other's credentials.
    static func aSeqpacketListenerOnAnAbstractName() throws {
        let name = "ringlet-test-\(getpid())-\(monotonicNanoseconds)"
        let address = try SocketAddress.abstract(name)
        #expect(address.description == "unix:@\(name)")
        let listener = try RingSocket.listening(on: address, kind: .seqpacket)
        let queue = DispatchQueue(label: "test.net.abstract")
        let peer = Outcome<PeerCredentials?>()
        listener.accept(queue: queue) { event in
            guard case .accepted(let connection) = event else { return }
            peer.set(try? connection.peerCredentials())
            connection.close()
        }
        let client = try RingSocket.open(family: SocketAddress.unixFamily, kind: .seqpacket)
        let connected = Outcome<Result<Void, SocketError>>()
        client.connect(to: address, queue: queue) { connected.set($0) }
        if case .failure(let error) = try #require(connected.wait()) { Issue.record("\(error)") }
        #expect(peer.wait() == .some(PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid())))
        #expect(try client.peerCredentials().pid == getpid())
        client.close()
        listener.close()
    }

    static func data(_ text: String) -> DispatchData {
        var data = DispatchData.empty
        Array(text.utf8).withUnsafeBytes { data.append($0) }
        return data
    }
}
