import Glibc
import Testing
@_spi(RingletNet) @testable import Ringlet

/// Continuous receives (RingSocket+Stream.swift), in the test process and on epoll.
enum SocketStreamScenarios {
    static let all: [(String, @Sendable () throws -> Void)] = [
        ("aContinuousReceiveTakesAStreamInOrder", aContinuousReceiveTakesAStreamInOrder),
        ("heldDataStopsTheReceivesUntilItIsReleased", heldDataStopsTheReceivesUntilItIsReleased),
        ("aCancelledContinuousReceiveEndsOnce", aCancelledContinuousReceiveEndsOnce),
        ("idleContinuousReceivesHoldNoBuffer", idleContinuousReceivesHoldNoBuffer),
        ("aSendToAPeerThatDoesNotReadEndsWhenCancelled", aSendToAPeerThatDoesNotReadEndsWhenCancelled),
        ("sendNowTakesWhatFitsAndKeepsTheOrder", sendNowTakesWhatFitsAndKeepsTheOrder),
    ]

    /// `sendNow` on the calling thread: what fits goes at once; while a send is on the
    /// ring it takes nothing (the order holds); a peer gone is reported naming the
    /// socket; after close() it takes nothing.
    static func sendNowTakesWhatFitsAndKeepsTheOrder() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let queue = DispatchQueue(label: "test.net.send.now")
        let received = Outcome<Result<[UInt8], SocketError>>()
        let (first, firstBytes) = patternData(1000)
        #expect(try a.sendNow(first).get() == 1000)
        // 8 MiB the peer has not started to read: the ring's send waits for room.
        let (big, bigBytes) = patternData(8 << 20, regions: 8)
        let bigSent = Outcome<Result<Int, SocketError>>()
        a.send(big, queue: queue) { bigSent.set($0) }
        let (last, lastBytes) = patternData(10, regions: 1)
        #expect(try a.sendNow(last).get() == 0)
        receiveAll(b, queue: queue) { received.set($0) }
        #expect(try #require(bigSent.wait()).get() == 8 << 20)
        var offset = 0
        #expect(eventually {
            offset += (try? a.sendNow(last.subdata(in: offset..<10)).get()) ?? 0
            return offset == 10
        })
        a.close()
        let bytes = try #require(received.wait()).get()
        #expect(bytes.count == 1000 + (8 << 20) + 10)
        #expect(bytes == firstBytes + bigBytes + lastBytes)
        b.close()

        let (c, d) = try RingSocket.pair(kind: .stream)
        let peerClosed = DispatchSemaphore(value: 0)
        d.close { peerClosed.signal() }
        #expect(waited(peerClosed))
        guard case .failure(let error) = c.sendNow(first) else {
            Issue.record("a send to a closed peer was taken")
            return
        }
        #expect(error.errno == .brokenPipe || error.errno == .connectionReset, "\(error)")
        #expect("\(error)".contains("socket \(c.fileDescriptor)"), "\(error)")
        c.close()
        #expect(try c.sendNow(first).get() == 0)
    }

    /// Three sockets with nothing to read, each with a continuous receive on the ring:
    /// none holds a receive buffer (the kernel's ring picks one only for bytes, and the
    /// engine polls before it takes one); closed, each ends once and the close handlers run.
    static func idleContinuousReceivesHoldNoBuffer() throws {
        let pairs = try (0..<3).map { _ in try RingSocket.pair(kind: .stream) }
        let queue = DispatchQueue(label: "test.net.idle")
        let ends = AtomicCounter()
        let inFlightBefore = Runtime.statistics.socketRequestsInFlight
        for (_, b) in pairs {
            b.receiveContinuously(queue: queue) { event in
                if case .ended(let error) = event, error?.isCancellation == true { ends.increment() }
            }
        }
        #expect(eventually { Runtime.statistics.socketRequestsInFlight >= inFlightBefore + 3 })
        settle(queue)
        #expect(Runtime.statistics.socketReceiveBuffersHeld == 0,
                "\(Runtime.statistics.socketReceiveBuffersHeld) buffers held by idle sockets")
        let closed = DispatchGroup()
        for (a, b) in pairs {
            closed.enter()
            b.close(queue: queue) { closed.leave() }
            a.close()
        }
        #expect(waited(closed))
        #expect(ends.value == 3)
    }

    /// 8 MiB sent to a peer that reads nothing: the send waits for room; cancelled, it
    /// ends with a cancellation (whatever part went), and the socket still closes.
    static func aSendToAPeerThatDoesNotReadEndsWhenCancelled() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let queue = DispatchQueue(label: "test.net.stuck.send")
        let (data, _) = patternData(8 << 20, regions: 8)
        let outcome = Outcome<Result<Int, SocketError>>()
        let request = a.send(data, queue: queue) { outcome.set($0) }
        #expect(eventually { Runtime.dump().contains("socket \(a.fileDescriptor) (stream") })
        request.cancel()
        guard case .failure(let error) = try #require(outcome.wait()) else { Issue.record("8 MiB went"); return }
        #expect(error.isCancellation, "\(error)")
        let closed = DispatchSemaphore(value: 0)
        a.close { closed.signal() }
        #expect(waited(closed))
        b.close()
    }

    /// 1 MiB sent in one send, then the sender closes: the receive hands over every
    /// byte in order, then `.ended(nil)` once, last.
    static func aContinuousReceiveTakesAStreamInOrder() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let queue = DispatchQueue(label: "test.net.stream")
        let (data, bytes) = patternData(1 << 20, regions: 4)
        let received = SharedValue<[UInt8]>([])
        let ends = Recorder<String>()
        let ended = DispatchSemaphore(value: 0)
        b.receiveContinuously(queue: queue) { event in
            switch event {
            case .received(let chunk):
                if !ends.values.isEmpty { ends.append("bytes after the end") }
                received.value += contents(of: chunk)
            case .ended(let error):
                ends.append(error.map { "\($0)" } ?? "end")
                ended.signal()
            }
        }
        a.send(data, queue: queue) { _ in a.close() }
        #expect(waited(ended))
        settle(queue)
        #expect(ends.values == ["end"])
        // On io_uring (these machines run Linux 5.19 or later) the kernel picks the buffers.
        #expect(Runtime.statistics.socketReceiveBuffersProvided == (Runtime.statistics.backend == .ioUring))
        let same = queue.sync { received.value == bytes }
        #expect(same, "\(queue.sync { received.value.count }) of \(bytes.count) bytes, or out of order")
        b.close()
    }

    /// A handler that keeps every chunk holds the receive buffers: once all are held the
    /// receive waits (counted), short of the 2 MiB sent; released, the rest arrives.
    static func heldDataStopsTheReceivesUntilItIsReleased() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let queue = DispatchQueue(label: "test.net.held")
        let (data, bytes) = patternData(2 << 20, regions: 2)
        let kept = SharedValue<[DispatchData]>([])
        let keeping = SharedValue(true)
        let received = SharedValue<[UInt8]>([])
        let ended = DispatchSemaphore(value: 0)
        let waitsBefore = Runtime.statistics.socketReceiveBufferWaits
        b.receiveContinuously(queue: queue) { event in
            switch event {
            case .received(let chunk):
                if keeping.value { kept.value.append(chunk) }
                received.value += contents(of: chunk)
            case .ended: ended.signal()
            }
        }
        a.send(data, queue: queue) { _ in a.close() }
        let buffers = Runtime.statistics.socketReceiveBuffers
        #expect(eventually { Runtime.statistics.socketReceiveBuffersHeld == buffers },
                "\(Runtime.statistics.socketReceiveBuffersHeld) of \(buffers) buffers held")
        #expect(eventually { Runtime.statistics.socketReceiveBufferWaits > waitsBefore })
        #expect(queue.sync { received.value.count } < bytes.count, "every byte arrived with every buffer held")
        queue.sync {  // the buffers go back, and the handler keeps no more
            keeping.value = false
            kept.value = []
        }
        #expect(waited(ended))
        settle(queue)
        let same = queue.sync { received.value == bytes }
        #expect(same, "\(queue.sync { received.value.count }) of \(bytes.count) bytes, or out of order")
        #expect(Runtime.statistics.socketReceiveBuffersHeld == 0)
        b.close()
    }

    /// Nothing to read, then `cancel()`: one `.ended` with a cancellation; the socket
    /// still takes a plain receive afterwards.
    static func aCancelledContinuousReceiveEndsOnce() throws {
        let (a, b) = try RingSocket.pair(kind: .stream)
        let queue = DispatchQueue(label: "test.net.stream.cancel")
        let events = Recorder<String>()
        let ended = DispatchSemaphore(value: 0)
        let request = b.receiveContinuously(queue: queue) { event in
            if case .ended(let error) = event {
                events.append(error?.isCancellation == true ? "cancelled" : "ended \(String(describing: error))")
                ended.signal()
            } else {
                events.append("bytes")
            }
        }
        request.cancel()
        #expect(waited(ended))
        settle(queue)
        #expect(events.values == ["cancelled"])
        let next = Outcome<Result<ReceivedMessage, SocketError>>()
        b.receive(upTo: 8, queue: queue) { next.set($0) }
        a.send(SocketScenarios.data("next"), queue: queue) { _ in }
        if case .success(let message) = try #require(next.wait()) { #expect(Array(message.data) == Array("next".utf8)) }
        else { Issue.record("the plain receive after it failed") }
        a.close()
        b.close()
    }
}
