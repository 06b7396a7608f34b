#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
// What the NIO suites share: bounded waits, handlers that echo and collect, loopback.
// Every wait is bounded: a broken channel makes a test fail, never hang.

import CRingletTestSupport
import Glibc
import NIOCore
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletNIO

/// How long a test waits for what normally takes milliseconds (longer under a sanitizer).
let patience: TimeAmount = .seconds(isSanitized ? 60 : 15)

/// A ThreadSanitizer or AddressSanitizer build: the suites move less data there, so that
/// the load they add does not starve the timing of the other suites running beside them.
let isSanitized = rl_test_sanitizer_active() != 0

/// One group for the suites (loops are queues: one more group costs nothing but memory).
let testGroup = RingletEventLoopGroup(loopCount: 2)

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what) did not complete within \(patience)" }
}

/// The future's value, or a failure naming `what` once the patience runs out.
func bounded<Value: Sendable>(_ future: EventLoopFuture<Value>, _ what: String) throws -> Value {
    let promise = future.eventLoop.makePromise(of: Value.self)
    future.cascade(to: promise)
    let timer = future.eventLoop.scheduleTask(in: patience) { promise.fail(TimedOut(what: what)) }
    defer { timer.cancel() }
    return try promise.futureResult.wait()
}

/// `bounded` for async tests, which must not block their thread: it may be one of the
/// pool's, which the loops need.
func boundedAsync<Value: Sendable>(_ future: EventLoopFuture<Value>, _ what: String) async throws -> Value {
    let promise = future.eventLoop.makePromise(of: Value.self)
    future.cascade(to: promise)
    let timer = future.eventLoop.scheduleTask(in: patience) { promise.fail(TimedOut(what: what)) }
    defer { timer.cancel() }
    return try await promise.futureResult.get()
}

/// Polls `condition` every millisecond until it holds or the patience runs out.
func eventually(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) -> Bool {
    let end = NIODeadline.now() + patience
    while NIODeadline.now() < end {
        if condition() { return true }
        usleep(1000)
    }
    Issue.record("\(what) did not happen within \(patience)", sourceLocation: sourceLocation)
    return false
}

/// Sends back what it reads.
final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// Collects what a channel reads and what happens to it; `received(count)` completes
/// once that many bytes arrived.
final class Collector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private let lock = Locked(State())
    struct State {
        var bytes: [UInt8] = []
        var events: [String] = []
        var errors: [any Error] = []
        var waiters: [(Int, EventLoopPromise<[UInt8]>)] = []
        var writabilityChanges: [Bool] = []
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let ready = lock.withLock { state -> [(EventLoopPromise<[UInt8]>, [UInt8])] in
            state.bytes += buffer.readableBytesView
            let count = state.bytes.count
            let due = state.waiters.filter { $0.0 <= count }
            state.waiters.removeAll { $0.0 <= count }
            return due.map { ($0.1, state.bytes) }
        }
        ready.forEach { $0.0.succeed($0.1) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed? = event as? ChannelEvent { lock.withLock { $0.events.append("inputClosed") } }
        if case ChannelEvent.outputClosed? = event as? ChannelEvent { lock.withLock { $0.events.append("outputClosed") } }
        context.fireUserInboundEventTriggered(event)
    }

    func channelActive(context: ChannelHandlerContext) {
        lock.withLock { $0.events.append("active") }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        lock.withLock { $0.events.append("inactive") }
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        lock.withLock { $0.writabilityChanges.append(writable) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        lock.withLock { $0.errors.append(error) }
        context.fireErrorCaught(error)
    }

    /// Completes with every byte read so far once at least `count` arrived.
    func received(_ count: Int, on loop: EventLoop) -> EventLoopFuture<[UInt8]> {
        let promise = loop.makePromise(of: [UInt8].self)
        let now: [UInt8]? = lock.withLock { state in
            if state.bytes.count >= count { return state.bytes }
            state.waiters.append((count, promise))
            return nil
        }
        if let now { promise.succeed(now) }
        return promise.futureResult
    }

    var bytes: [UInt8] { lock.withLock { $0.bytes } }
    var events: [String] { lock.withLock { $0.events } }
    var errors: [any Error] { lock.withLock { $0.errors } }
    var writabilityChanges: [Bool] { lock.withLock { $0.writabilityChanges } }
}

/// An echo server on 127.0.0.1 and a port the kernel picks.
func startEchoServer(group: RingletEventLoopGroup = testGroup,
                     childOptions: (RingletServerBootstrap) -> RingletServerBootstrap = { $0 }) throws -> Channel {
    let bootstrap = childOptions(RingletServerBootstrap(group: group)
        .serverChannelOption(ChannelOptions.backlog, value: 512)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
        })
    return try bounded(bootstrap.bind(host: "127.0.0.1", port: 0), "bind")
}

/// A client connected to `server` with `collector` in its pipeline.
func connectClient(to server: Channel, collector: Collector, group: RingletEventLoopGroup = testGroup,
                   options: (RingletClientBootstrap) -> RingletClientBootstrap = { $0 }) throws -> Channel {
    let bootstrap = options(RingletClientBootstrap(group: group)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
        })
    return try bounded(bootstrap.connect(to: server.localAddress!), "connect to \(server.localAddress!)")
}

func buffer(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: bytes) }

/// Patterned bytes, so that a reordering or a lost chunk shows.
func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

/// The process's open descriptors.
func openDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while readdir(directory) != nil { count += 1 }
    return count - 3  // ".", ".." and the directory's own descriptor
}
#endif
