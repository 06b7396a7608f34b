import CRinglet
import Glibc
import Testing
@_spi(RingletNet) @testable import Ringlet

/// The socket layer (Sources/Ringlet/Net) on the backend this machine gives, and on epoll.
@Suite struct SocketTests {
    static let scenarios = SocketScenarios.all + SocketStreamScenarios.all

    @Test(arguments: scenarios.map(\.0))
    func scenario(_ name: String) throws {
        try #require(Self.scenarios.first { $0.0 == name }).1()
    }

    @Test func everyScenarioOnEpoll() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2, backend: .epoll))
            for (name, scenario) in SocketTests.scenarios {
                do { try scenario() } catch {
                    Issue.record("\(name) on epoll: \(error)")
                    exit(1)
                }
            }
        }
    }

    /// A shutdown is the manager's own shutdown(2): the ring's IORING_OP_SHUTDOWN never
    /// completes inline, and the first would start one of the kernel's io-wq threads in
    /// the process ("iou-wrk-N") beside Ringlet's fixed set.
    @Test(.enabled(if: RingAvailability.works, "io_uring is refused here"))
    func aShutdownStartsNoKernelWorkerThread() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2))
            guard let (a, b) = try? RingSocket.pair(kind: .stream) else { exit(2) }
            let before = processThreadIDs()
            let done = DispatchGroup()
            for (socket, direction) in [(a, RingSocket.Direction.write), (b, .both)] {
                done.enter()
                socket.shutdown(direction, queue: .global()) { result in
                    if case .failure(let error) = result { print("shutdown failed: \(error)") }
                    done.leave()
                }
            }
            guard done.wait(timeout: .now() + 10) == .success else { exit(3) }
            let kernelWorkers = processThreadIDs().subtracting(before).filter {
                ThreadControl.threadName($0)?.hasPrefix("iou-wrk") == true
            }
            exit(kernelWorkers.isEmpty ? 0 : 4)
        }
    }

    /// The manager-side forms: the handler runs on the manager thread, no item between.
    @Test func handlersOnTheManagerRunThere() throws {
        let (left, right) = try RingSocket.pair(kind: .seqpacket)
        let sent = Outcome<(Int, Bool)>()
        left.send(patternData(100).0, handlerOnManager: { result in
            sent.set(((try? result.get()) ?? -1, ThreadContext.current.isManager))
        })
        let received = Outcome<(Int, Bool)>()
        right.receive(upTo: 4096, handlerOnManager: { result in
            received.set(((try? result.get())?.data.count ?? -1, ThreadContext.current.isManager))
        })
        let (count, onManager) = try #require(sent.wait())
        #expect(count == 100 && onManager)
        let (bytes, receivedOnManager) = try #require(received.wait())
        #expect(bytes == 100 && receivedOnManager)
        left.close()
        right.close()
    }

    @Test func theAwaitingFormsConnectSendAndReceive() async throws {
        let (listener, address) = try loopbackListener()
        let queue = DispatchQueue(label: "test.net.async")
        listener.accept(queue: queue) { event in
            guard case .accepted(let connection) = event else { return }
            receiveAll(connection, queue: queue) { result in
                guard case .success(let bytes) = result else { return }
                var data = DispatchData.empty
                bytes.withUnsafeBytes { data.append($0) }
                connection.send(data, queue: queue) { _ in connection.close() }
            }
        }
        let client = try RingSocket.open(family: address.family, kind: .stream)
        try await client.connect(to: address)
        let (data, bytes) = patternData(10_000)
        #expect(try await client.send(data) == bytes.count)
        client.shutdown(.write, queue: queue) { _ in }
        var back: [UInt8] = []
        while true {
            let message = try await client.receive(upTo: 4096)
            if message.endOfStream { break }
            back += Array(message.data)
        }
        let same = back == bytes
        #expect(same, "\(back.count) of \(bytes.count) bytes came back, or out of order")
        client.close()
        listener.close()
    }

    @Test func cancellingTheTaskCancelsItsReceive() async throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let task = Task { try await b.receive(upTo: 8) }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a receive with nothing to read returned")
        } catch let error as SocketError {
            #expect(error.isCancellation, "\(error)")
        }
        a.close()
        b.close()
    }

    /// A receive with nothing to read is on the ring: the statistics count it and the
    /// live dump names its socket and call; cancelled, it leaves both.
    @Test func aWaitingReceiveShowsInTheStatisticsAndTheDump() throws {
        let (a, b) = try RingSocket.pair(kind: .seqpacket)
        let ended = DispatchSemaphore(value: 0)
        let request = b.receive(upTo: 8, queue: DispatchQueue(label: "test.net.dump")) { _ in ended.signal() }
        #expect(eventually { Runtime.statistics.socketRequestsInFlight >= 1 })
        let dump = Runtime.dump()
        #expect(dump.contains("socket \(b.fileDescriptor) (seqpacket") && dump.contains("recvmsg"), "\(dump)")
        request.cancel()
        #expect(waited(ended))
        #expect(Runtime.statistics.socketRequestsPeak >= 1)
        #expect(!Runtime.dump().contains("socket \(b.fileDescriptor) (seqpacket"))
        a.close()
        b.close()
    }

    /// A blocking descriptor handed to `init(adopting:)` becomes non-blocking: the epoll
    /// backend's calls must never block the manager.
    @Test func anAdoptedSocketIsMadeNonBlocking() throws {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        #expect(fcntl(fds[0], F_GETFL) & O_NONBLOCK == 0)
        let adopted = RingSocket(adopting: fds[0], kind: .stream)
        #expect(fcntl(fds[0], F_GETFL) & O_NONBLOCK != 0)
        adopted.close()
        close(fds[1])
    }

    @Test func aContinuousReceiveOnADatagramSocketTrapsNamingIt() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let socket = try? RingSocket.open(family: SocketAddress.inetFamily, kind: .datagram)
            socket?.receiveContinuously(queue: DispatchQueue(label: "test.net.datagram")) { _ in }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("receiveContinuously on socket") && text.contains("(datagram")
                && text.contains("receive(upTo:queue:handler:)"), "\(text)")
    }

    @Test func badAddressesAreRefusedWithWhatToDo() {
        #expect(throws: SocketError.self) { try SocketAddress.ip("localhost", port: 80) }
        do {
            _ = try SocketAddress.unix(path: String(repeating: "x", count: 200))
            Issue.record("a 200-byte path was taken")
        } catch {
            #expect(error.errno == .nameTooLong && error.description.contains("shorter path"), "\(error)")
        }
        #expect(throws: SocketError.self) { try SocketAddress.ip("127.0.0.1", port: 70000) }
        #expect((try? SocketAddress.ip("::1", port: 8080))?.description == "[::1]:8080")
    }

    @Test func aListenerOnAPortInUseSaysSo() throws {
        let (listener, address) = try loopbackListener()
        do {
            _ = try RingSocket.listening(on: address)
            Issue.record("two listeners on \(address)")
        } catch {
            #expect(error.errno == .addressInUse && error.description.contains("bind on socket"), "\(error)")
        }
        listener.close()
    }
}
