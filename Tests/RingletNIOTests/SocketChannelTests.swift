#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import Glibc
import NIOCore
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletNIO

/// TCP channels over the runtime's socket layer, with NIO's semantics: pipelines, reads on
/// demand, writability, half-close, resets, NIO's errors. `make test` runs them on
/// io_uring, on epoll and with io_uring refused.
@Suite struct SocketChannelTests {
    @Test func bytesGoThereAndBackInOrder() throws {
        let server = try startEchoServer()
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector)
        #expect(client.isActive)
        #expect(client.remoteAddress?.port == server.localAddress?.port)
        #expect(client.localAddress?.ipAddress == "127.0.0.1")
        let sent = pattern(isSanitized ? 60_000 : 300_000)
        var writes: [EventLoopFuture<Void>] = []
        for start in stride(from: 0, to: sent.count, by: 7_000) {
            writes.append(client.write(buffer(Array(sent[start..<min(start + 7_000, sent.count)]))))
            if start % 21_000 == 0 { client.flush() }
        }
        client.flush()
        try bounded(EventLoopFuture.andAllSucceed(writes, on: client.eventLoop), "the writes")
        let echoed = try bounded(collector.received(sent.count, on: client.eventLoop), "\(sent.count) echoed bytes")
        #expect(echoed == sent)
        try bounded(client.close(), "the client's close")
        try bounded(server.close(), "the server's close")
        #expect(collector.events == ["active", "inactive"])
    }

    @Test func aRefusedConnectIsAnIOErrorNamingTheAddress() throws {
        // A port just given up: nothing listens there.
        let probe = try startEchoServer()
        let address = probe.localAddress!
        try bounded(probe.close(), "the probe's close")
        let bootstrap = RingletClientBootstrap(group: testGroup)
        let error = #expect(throws: IOError.self) { try bounded(bootstrap.connect(to: address), "a refused connect") }
        #expect(error?.errnoCode == ECONNREFUSED)
        #expect("\(error!)".contains("127.0.0.1:\(address.port!)"))
    }

    @Test func halfClosedInputStillLetsTheServerAnswer() throws {
        // The server reads until the client's FIN, then answers and closes.
        final class AnswerAtEnd: ChannelInboundHandler, @unchecked Sendable {
            typealias InboundIn = ByteBuffer
            var count = 0
            func channelRead(context: ChannelHandlerContext, data: NIOAny) { count += unwrapInboundIn(data).readableBytes }
            func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
                guard case ChannelEvent.inputClosed? = event as? ChannelEvent else { return }
                let answer = "read \(count)"
                context.writeAndFlush(NIOAny(ByteBuffer(string: answer))).whenComplete { _ in context.close(promise: nil) }
            }
        }
        let server = try bounded(RingletServerBootstrap(group: testGroup)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(AnswerAtEnd()) }
            }
            .bind(host: "127.0.0.1", port: 0), "bind")
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector) {
            $0.channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        }
        try bounded(client.writeAndFlush(buffer(pattern(5000))), "the write")
        try bounded(client.close(mode: .output), "the client's shutdown of its output")
        let answer = try bounded(collector.received(9, on: client.eventLoop), "the answer")
        #expect(String(decoding: answer, as: UTF8.self) == "read 5000")
        // Writing after the output closed fails at once, and the server's close ends the input.
        #expect(throws: ChannelError.outputClosed) { try bounded(client.writeAndFlush(buffer([1])), "a late write") }
        #expect(eventually("the client's input end") { collector.events.contains("inputClosed") })
        #expect(collector.events.contains("outputClosed"))
        try bounded(client.close(), "the client's close")
        try bounded(server.close(), "the server's close")
    }

    @Test func withoutHalfClosureTheEndOfInputClosesTheChannel() throws {
        let server = try startEchoServer()
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector)
        // The server side closes every connection it accepts.
        let serverCollector = Collector()
        let closing = try bounded(RingletServerBootstrap(group: testGroup)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(serverCollector)
                    channel.eventLoop.execute { channel.close(promise: nil) }
                }
            }
            .bind(host: "127.0.0.1", port: 0), "bind")
        let closedClient = try connectClient(to: closing, collector: collector)
        try bounded(closedClient.closeFuture, "the close the server's FIN causes")
        #expect(!closedClient.isActive)
        try bounded(client.close(), "close")
        try bounded(server.close(), "close")
        try bounded(closing.close(), "close")
    }

    @Test func aPeerThatResetsIsReportedAndTheChannelCloses() throws {
        // The server's side closes with SO_LINGER 0 as soon as bytes arrive: the kernel resets.
        final class ResetOnRead: ChannelInboundHandler, @unchecked Sendable {
            typealias InboundIn = ByteBuffer
            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                let descriptor = (context.channel as! RingletSocketChannel).socket!.fileDescriptor
                var abort = linger(l_onoff: 1, l_linger: 0)
                _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
                context.close(promise: nil)
            }
        }
        let server = try bounded(RingletServerBootstrap(group: testGroup)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ResetOnRead()) }
            }
            .bind(host: "127.0.0.1", port: 0), "bind")
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector)
        // Keep writing until the reset arrives; each failed write's error is NIO's.
        let chunk = buffer(pattern(16_384))
        var lastWrite = client.writeAndFlush(chunk)
        for _ in 0..<64 { lastWrite = client.writeAndFlush(chunk) }
        _ = try? bounded(lastWrite, "the writes")
        try bounded(client.closeFuture, "the close the reset causes")
        let errors = collector.errors.compactMap { $0 as? IOError }
        #expect(!errors.isEmpty, "no IOError reached the pipeline: \(collector.errors)")
        #expect(errors.allSatisfy { [ECONNRESET, EPIPE].contains($0.errnoCode) })
        try bounded(server.close(), "close")
    }

    @Test func aSlowReaderMakesTheWriterUnwritableUntilItReads() throws {
        // The server reads nothing until told: the client's bytes pile up above the high mark.
        let serverChannel = Locked<Channel?>(nil)
        let serverCollector = Collector()
        let server = try bounded(RingletServerBootstrap(group: testGroup)
            .childChannelOption(ChannelOptions.autoRead, value: false)
            .childChannelInitializer { channel in
                serverChannel.withLock { $0 = channel }
                return channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(serverCollector) }
            }
            .bind(host: "127.0.0.1", port: 0), "bind")
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector) {
            $0.channelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 16_384, high: 65_536))
        }
        let total = 8 * 1024 * 1024  // above what loopback's kernel buffers take in, sanitized or not
        // Each chunk starts with its number: the first flushes go from the loop's thread at
        // once, the later ones wait on the ring, and a reordering between the two shows.
        let chunks = (0..<(total / 65_536)).map { index -> [UInt8] in
            var chunk = pattern(65_536)
            withUnsafeBytes(of: UInt32(index).littleEndian) { chunk.replaceSubrange(0..<4, with: $0) }
            return chunk
        }
        var writes: [EventLoopFuture<Void>] = []
        for chunk in chunks { writes.append(client.writeAndFlush(buffer(chunk))) }
        #expect(eventually("the client going unwritable") { !client.isWritable })
        #expect(collector.writabilityChanges.first == false)
        // Now the server reads: every byte arrives and the client is writable again.
        let reader = try #require(serverChannel.withLock { $0 })
        try bounded(reader.setOption(ChannelOptions.autoRead, value: true), "autoRead on")
        let received = try bounded(serverCollector.received(total, on: reader.eventLoop), "\(total) bytes")
        #expect(received.count == total)
        #expect(received == chunks.flatMap { $0 }, "the bytes came in another order")
        try bounded(EventLoopFuture.andAllSucceed(writes, on: client.eventLoop), "the writes")
        #expect(client.isWritable)
        // Each change reaches the pipeline, alternating (while the test thread still wrote,
        // the kernel's buffers could take some and the writer turn writable for a while).
        let changes = collector.writabilityChanges
        #expect(changes.first == false && changes.last == true)
        #expect(zip(changes, changes.dropFirst()).allSatisfy { $0 != $1 })
        try bounded(client.close(), "close")
        try bounded(server.close(), "close")
    }

    @Test func autoReadOffDeliversOnlyWhenAsked() throws {
        let server = try startEchoServer()
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector) {
            $0.channelOption(ChannelOptions.autoRead, value: false)
        }
        try bounded(client.writeAndFlush(buffer(pattern(1000))), "the write")
        // The echo is back in the client's kernel buffer; nothing is delivered until read().
        try bounded(client.eventLoop.scheduleTask(in: .milliseconds(50)) {}.futureResult, "a window")
        #expect(collector.bytes.isEmpty)
        client.read()
        let echoed = try bounded(collector.received(1000, on: client.eventLoop), "the echo after read()")
        #expect(echoed == pattern(1000))
        try bounded(client.close(), "close")
        try bounded(server.close(), "close")
    }

    @Test func anAcceptStormIsServedWhole() throws {
        let server = try startEchoServer()
        let clients = isSanitized ? 50 : 200
        let collectors = (0..<clients).map { _ in Collector() }
        let connects = collectors.map { collector in
            RingletClientBootstrap(group: testGroup)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
                }
                .connect(to: server.localAddress!)
        }
        let channels = try bounded(EventLoopFuture.whenAllSucceed(connects, on: testGroup.next()), "\(clients) connects")
        for (index, channel) in channels.enumerated() {
            channel.writeAndFlush(buffer([UInt8(index & 0xff), 1, 2, 3]), promise: nil)
        }
        for (index, collector) in collectors.enumerated() {
            let echoed = try bounded(collector.received(4, on: channels[index].eventLoop), "client \(index)'s echo")
            #expect(echoed == [UInt8(index & 0xff), 1, 2, 3])
        }
        try bounded(EventLoopFuture.andAllSucceed(channels.map { $0.close() }, on: testGroup.next()), "the closes")
        try bounded(server.close(), "close")
    }

    @Test func tenThousandConnectionsLeaveNoDescriptorNodeOrChannelBehind() async {
        // In a process of its own: the descriptor count and the runtime's socket requests
        // are the process's, which the other suites share.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            do { try ConnectionChurn.run() } catch { Issue.record("\(error)") }
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }

    @Test func optionsAreSetOnTheSocketAndUnknownOnesRefused() throws {
        let server = try startEchoServer()
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector) {
            $0.channelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
              .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
        }
        #expect(try bounded(client.getOption(ChannelOptions.socketOption(.so_keepalive)), "SO_KEEPALIVE") != 0)
        #expect(try bounded(client.getOption(ChannelOptions.tcpOption(.tcp_nodelay)), "TCP_NODELAY") != 0)
        #expect(try bounded(client.getOption(ChannelOptions.autoRead), "autoRead"))
        #expect(throws: ChannelError.operationUnsupported) {
            try bounded(client.setOption(ChannelOptions.datagramVectorReadMessageCount, value: 4), "a datagram option")
        }
        try bounded(client.close(), "close")
        #expect(throws: ChannelError.alreadyClosed) { try bounded(client.close(), "a second close") }
        #expect(throws: ChannelError.ioOnClosedChannel) { try bounded(client.writeAndFlush(buffer([1])), "a write after close") }
        try bounded(server.close(), "close")
    }
}

/// 10,000 connections (1,000 under a sanitizer) opened, written to and closed in batches
/// of 100; then no channel, socket request or descriptor is left.
enum ConnectionChurn {
    static func run() throws {
        let group = RingletEventLoopGroup(loopCount: 2)
        let server = try startEchoServer(group: group)
        let descriptorsBefore = openDescriptorCount()
        let total = isSanitized ? 1_000 : 10_000
        let batch = 100
        for _ in 0..<(total / batch) {
            let connects = (0..<batch).map { _ in RingletClientBootstrap(group: group).connect(to: server.localAddress!) }
            let channels = try bounded(EventLoopFuture.whenAllSucceed(connects, on: group.next()), "a batch of connects")
            let closes = channels.map { channel in channel.writeAndFlush(buffer([7])).flatMap { channel.close() } }
            try bounded(EventLoopFuture.andAllSucceed(closes, on: group.next()), "a batch of closes")
        }
        // The server's side of each connection closes when the client's FIN arrives.
        #expect(eventually("the server's connections closing") { group.openChannelCount == 1 })
        try bounded(server.close(), "close")
        #expect(group.openChannelCount == 0)
        #expect(eventually("the socket requests settling") { Runtime.statistics.socketRequestsInFlight == 0 })
        #expect(eventually("the descriptors going back") { openDescriptorCount() <= descriptorsBefore - 1 })
    }
}
#endif
