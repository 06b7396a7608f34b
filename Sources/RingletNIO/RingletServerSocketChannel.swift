#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet
import Synchronization

/// A listening TCP (or Unix stream) socket as an NIO server channel: one multishot
/// accept on the ring hands each connection to the pipeline as a `Channel` (a
/// `RingletSocketChannel` on the next loop of the child group), which the bootstrap's
/// acceptor sets up and activates on its own loop.
///
/// `autoRead` off stops accepting after the next connection until `read()` (the kernel
/// keeps the rest in the backlog); the accept hands over every connection the kernel
/// made even when it stops.
// @unchecked Sendable: the state is the loop's; what other threads read is atomic or locked.
final class RingletServerSocketChannel: Channel, ChannelCore, @unchecked Sendable {
    let loop: RingletEventLoop
    /// The loops of accepted connections (nil: this channel's loop).
    let childGroup: RingletEventLoopGroup?
    private(set) var _pipeline: ChannelPipeline!
    let closePromise: EventLoopPromise<Void>
    let activeFlag = Atomic<Bool>(false)
    let boundAddress = Locked<NIOCore.SocketAddress?>(nil)

    // The loop's:
    var socket: RingSocket?
    var settings = ChannelSettings()
    var registered = false
    var closed = false
    var acceptor: SocketRequest?

    init(loop: RingletEventLoop, childGroup: RingletEventLoopGroup?) {
        self.loop = loop
        self.childGroup = childGroup
        closePromise = loop.makePromise()
        _pipeline = ChannelPipeline(channel: self)
    }

    var eventLoop: EventLoop { loop }
    var pipeline: ChannelPipeline { _pipeline }
    var parent: Channel? { nil }
    var allocator: ByteBufferAllocator { settings.allocator }
    var closeFuture: EventLoopFuture<Void> { closePromise.futureResult }
    var _channelCore: ChannelCore { self }
    var isActive: Bool { activeFlag.load(ordering: .acquiring) }
    var isWritable: Bool { false }
    var localAddress: NIOCore.SocketAddress? { boundAddress.withLock { $0 } }
    var remoteAddress: NIOCore.SocketAddress? { nil }

    func setOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> EventLoopFuture<Void> {
        if loop.inEventLoop { return loop.makeCompletedFuture { try setOption0(option, value) } }
        let value = UnsafeTransfer(value)
        return loop.submit { try self.setOption0(option, value.value) }
    }

    func getOption<Option: ChannelOption>(_ option: Option) -> EventLoopFuture<Option.Value> {
        if loop.inEventLoop { return loop.makeCompletedFuture { UnsafeTransfer(try settings.get(option, socket: socket)) }.map(\.value) }
        return loop.submit { UnsafeTransfer(try self.settings.get(option, socket: self.socket)) }.map(\.value)
    }

    private func setOption0<Option: ChannelOption>(_ option: Option, _ value: Option.Value) throws {
        if closed { throw ChannelError.ioOnClosedChannel }
        try settings.set(option, value, socket: socket)
        if option is ChannelOptions.Types.AutoReadOption, isActive {
            if settings.autoRead { pipeline.syncOperations.read() } else { stopAccepting() }
        }
    }

    // MARK: ChannelCore

    func localAddress0() throws -> NIOCore.SocketAddress {
        guard let address = localAddress, !closed else { throw ChannelError.ioOnClosedChannel }
        return address
    }

    func remoteAddress0() throws -> NIOCore.SocketAddress { throw ChannelError.operationUnsupported }

    func register0(promise: EventLoopPromise<Void>?) {
        if closed { return promise?.fail(ChannelError.ioOnClosedChannel) ?? () }
        if registered { return promise?.fail(ChannelError.inappropriateOperationForState) ?? () }
        registered = true
        loop.opened(self)
        promise?.succeed(())
        pipeline.syncOperations.fireChannelRegistered()
    }

    func registerAlreadyConfigured0(promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.operationUnsupported)
    }

    /// Opens the socket, sets the kept options (and SO_REUSEADDR on IP, as NIO's
    /// bootstrap users expect from servers), binds, listens, and becomes active.
    func bind0(to address: NIOCore.SocketAddress, promise: EventLoopPromise<Void>?) {
        if closed { return promise?.fail(ChannelError.ioOnClosedChannel) ?? () }
        if socket != nil { return promise?.fail(ChannelError.inappropriateOperationForState) ?? () }
        do {
            let target = try SocketAddresses.ringlet(address)
            do throws(SocketError) {
                let socket = try RingSocket.open(family: target.family, kind: .stream)
                self.socket = socket
                if target.family != Ringlet.SocketAddress.unixFamily { try socket.setOption(.reuseAddress, 1) }
            } catch { throw NIOErrors.io(error) }
            try settings.apply(to: socket!)
            do throws(SocketError) {
                try socket!.bind(to: target)
                try socket!.listen(backlog: settings.backlog)
                boundAddress.withLock { $0 = SocketAddresses.nio((try? socket!.localAddress()) ?? target) }
            } catch { throw NIOErrors.io(error) }
        } catch {
            promise?.fail(error)
            return close0(error: error, mode: .all, promise: nil)
        }
        activeFlag.store(true, ordering: .releasing)
        promise?.succeed(())
        pipeline.syncOperations.fireChannelActive()
        if settings.autoRead { pipeline.syncOperations.read() }
    }

    func connect0(to address: NIOCore.SocketAddress, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.operationUnsupported)
    }

    func write0(_ data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.operationUnsupported)
    }

    func flush0() {}

    func triggerUserOutboundEvent0(_ event: Any, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.operationUnsupported)
    }

    /// A connection set up by the pipeline (the bootstrap's acceptor) reaches the end:
    /// registered and activated on its own loop — its first read starts only now, with
    /// its handlers in place. Anything else reaching the end is dropped, as in NIO.
    func channelRead0(_ data: NIOAny) {
        guard let child = tryUnwrapData(data, as: Channel.self) else { return }
        child.eventLoop.execute {
            guard let connection = child as? RingletSocketChannel else {
                child.close(promise: nil)
                return
            }
            connection.registerAlreadyConfigured0(promise: nil)
        }
    }

    func errorCaught0(error: Error) {}

    // MARK: Accepting

    func read0() {
        guard !closed, isActive, acceptor == nil, let socket else { return }
        acceptor = socket.accept(queue: loop.queue) { [self] event in loop.run { accepted(event) } }
    }

    private func stopAccepting() {
        acceptor?.cancel()
    }

    private func accepted(_ event: AcceptEvent) {
        switch event {
        case .accepted(let connection):
            if closed {
                connection.close()
                return
            }
            let child = RingletSocketChannel(loop: childGroup?.nextLoop() ?? loop, socket: connection, parent: self)
            pipeline.syncOperations.fireChannelRead(NIOAny(child as Channel))
            pipeline.syncOperations.fireChannelReadComplete()
            if !settings.autoRead { stopAccepting() }
        case .refused(let error):
            // Out of descriptors or memory: the runtime backs off and tries again.
            pipeline.syncOperations.fireErrorCaught(NIOErrors.io(error))
        case .ended(let error):
            acceptor = nil
            if closed || error.isCancellation { return }
            let reported = NIOErrors.io(error)
            pipeline.syncOperations.fireErrorCaught(reported)
            close0(error: reported, mode: .all, promise: nil)
        }
    }

    // MARK: Closing

    func close0(error: Error, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if closed { return promise?.fail(ChannelError.alreadyClosed) ?? () }
        guard mode == .all else { return promise?.fail(ChannelError.operationUnsupported) ?? () }
        closed = true
        let wasActive = activeFlag.exchange(false, ordering: .acquiringAndReleasing)
        if let socket {
            socket.close(queue: loop.queue) { [self] in loop.run { finishClose(promise) } }
        } else {
            loop.execute { [self] in finishClose(promise) }
        }
        if wasActive { pipeline.syncOperations.fireChannelInactive() }
    }

    private func finishClose(_ promise: EventLoopPromise<Void>?) {
        if registered {
            registered = false
            pipeline.syncOperations.fireChannelUnregistered()
        }
        loop.closed(self)
        removeHandlers(pipeline: pipeline)
        promise?.succeed(())
        closePromise.succeed(())
    }
}
#endif
