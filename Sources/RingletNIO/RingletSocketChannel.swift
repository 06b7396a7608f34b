#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet
import Synchronization

/// A TCP (or Unix stream) connection as an NIO `Channel`, whose connect, reads, writes,
/// shutdowns and close are requests of the runtime's socket layer: a continuous receive
/// into the runtime's provided buffers, vectored sends of the pipeline's buffers without
/// a copy. Everything but the `Channel` properties NIO reads from any thread runs on its
/// loop, one `RingletEventLoop`.
///
/// Reads follow NIO's demand: `read()` (which `autoRead` calls after each
/// `channelReadComplete`) delivers what arrived; while nobody asks, the receive stops, so
/// a slow reader leaves the bytes in the kernel (back-pressure) rather than in memory.
/// Writes count toward the write-buffer water marks until the kernel takes them.
// @unchecked Sendable: the state is the loop's; what other threads read is atomic or locked.
final class RingletSocketChannel: Channel, ChannelCore, @unchecked Sendable {
    let loop: RingletEventLoop
    let parent: Channel?
    private(set) var _pipeline: ChannelPipeline!
    let closePromise: EventLoopPromise<Void>

    // Any thread:
    let activeFlag = Atomic<Bool>(false)
    let writableFlag = Atomic<Bool>(true)
    let addresses = Locked<(local: NIOCore.SocketAddress?, remote: NIOCore.SocketAddress?)>((nil, nil))

    // The loop's:
    var socket: RingSocket?
    var settings = ChannelSettings()
    var registered = false
    /// `close0(mode: .all)` ran: from here every operation fails.
    var closed = false
    var inputClosed = false
    var outputClosed = false
    var connectPromise: EventLoopPromise<Void>?
    var connectTimeout: Scheduled<Void>?

    // Reading (RingletSocketChannel+Reading.swift)
    /// `read()` was asked and nothing has been delivered since.
    var readPending = false
    /// Bytes received and not yet delivered (only while nobody reads).
    var inbound: [ByteBuffer] = []
    /// The end of input, delivered after `inbound`.
    var inputEnd: InputEnd = .none
    var receiver: SocketRequest?
    var receiverStopping = false
    var deliveryScheduled = false

    // Writing (RingletSocketChannel+Writing.swift)
    var unflushed: [(buffer: ByteBuffer, promise: EventLoopPromise<Void>?)] = []
    /// Bytes written and not yet taken by the kernel: what the water marks count.
    var pendingBytes = 0
    var sendsInFlight = 0

    enum InputEnd {
        case none, endOfStream, failed(any Error)
    }

    /// A connection not yet made (a client's: `connect0` opens its socket) or an accepted
    /// one (`socket`), on `loop`.
    init(loop: RingletEventLoop, socket: RingSocket?, parent: Channel?) {
        self.loop = loop
        self.socket = socket
        self.parent = parent
        closePromise = loop.makePromise()
        _pipeline = ChannelPipeline(channel: self)
    }

    // MARK: Channel

    var eventLoop: EventLoop { loop }
    var pipeline: ChannelPipeline { _pipeline }
    var allocator: ByteBufferAllocator { settings.allocator }
    var closeFuture: EventLoopFuture<Void> { closePromise.futureResult }
    var _channelCore: ChannelCore { self }
    var isActive: Bool { activeFlag.load(ordering: .acquiring) }
    var isWritable: Bool { writableFlag.load(ordering: .acquiring) }
    var localAddress: NIOCore.SocketAddress? { addresses.withLock { $0.local } }
    var remoteAddress: NIOCore.SocketAddress? { addresses.withLock { $0.remote } }

    func setOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> EventLoopFuture<Void> {
        if loop.inEventLoop { return loop.makeCompletedFuture { try setOption0(option, value) } }
        let value = UnsafeTransfer(value)
        return loop.submit { try self.setOption0(option, value.value) }
    }

    func getOption<Option: ChannelOption>(_ option: Option) -> EventLoopFuture<Option.Value> {
        if loop.inEventLoop { return loop.makeCompletedFuture { UnsafeTransfer(try settings.get(option, socket: socket)) }.map(\.value) }
        return loop.submit { UnsafeTransfer(try self.settings.get(option, socket: self.socket)) }.map(\.value)
    }

    func setOption0<Option: ChannelOption>(_ option: Option, _ value: Option.Value) throws {
        if closed { throw ChannelError.ioOnClosedChannel }
        let readingWasOn = settings.autoRead
        try settings.set(option, value, socket: socket)
        if option is ChannelOptions.Types.AutoReadOption, settings.autoRead, !readingWasOn, isActive {
            pipeline.syncOperations.read()
        }
    }

    // MARK: ChannelCore: addresses and registration

    func localAddress0() throws -> NIOCore.SocketAddress {
        guard let socket, !closed else { throw ChannelError.ioOnClosedChannel }
        let found: Ringlet.SocketAddress
        do throws(SocketError) { found = try socket.localAddress() } catch { throw NIOErrors.io(error) }
        guard let address = SocketAddresses.nio(found) else { throw ChannelError.operationUnsupported }
        return address
    }

    func remoteAddress0() throws -> NIOCore.SocketAddress {
        guard let socket, !closed else { throw ChannelError.ioOnClosedChannel }
        let found: Ringlet.SocketAddress
        do throws(SocketError) { found = try socket.peerAddress() } catch { throw NIOErrors.io(error) }
        guard let address = SocketAddresses.nio(found) else { throw ChannelError.operationUnsupported }
        return address
    }

    func register0(promise: EventLoopPromise<Void>?) {
        if closed { return promise?.fail(ChannelError.ioOnClosedChannel) ?? () }
        if registered { return promise?.fail(ChannelError.inappropriateOperationForState) ?? () }
        registered = true
        loop.opened(self)
        promise?.succeed(())
        pipeline.syncOperations.fireChannelRegistered()
    }

    /// An accepted connection: registered and active at once.
    func registerAlreadyConfigured0(promise: EventLoopPromise<Void>?) {
        guard let socket else { return promise?.fail(ChannelError.inappropriateOperationForState) ?? () }
        do { try settings.apply(to: socket) } catch {
            promise?.fail(error)
            return close0(error: error, mode: .all, promise: nil)
        }
        register0(promise: nil)
        becomeActive(promise: promise)
    }

    func bind0(to address: NIOCore.SocketAddress, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.operationUnsupported)  // a client's local address: not yet
    }

    func triggerUserOutboundEvent0(_ event: Any, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.operationUnsupported)
    }

    /// Reads nobody handled reach the pipeline's tail: dropped, as NIO's channels do.
    func channelRead0(_ data: NIOAny) {}

    func errorCaught0(error: Error) {}

    // MARK: Connecting

    func connect0(to address: NIOCore.SocketAddress, promise: EventLoopPromise<Void>?) {
        if closed { return promise?.fail(ChannelError.ioOnClosedChannel) ?? () }
        if socket != nil || connectPromise != nil {
            return promise?.fail(ChannelError.inappropriateOperationForState) ?? ()
        }
        let made = loop.makePromise(of: Void.self)
        if let promise { made.futureResult.cascade(to: promise) }
        connectPromise = made
        let target: Ringlet.SocketAddress
        let socket: RingSocket
        do {
            target = try SocketAddresses.ringlet(address)
            do throws(SocketError) { socket = try RingSocket.open(family: target.family, kind: .stream) } catch {
                throw NIOErrors.io(error)
            }
            try settings.apply(to: socket)
        } catch {
            return connectFailed(error)
        }
        self.socket = socket
        if let timeout = settings.connectTimeout {
            connectTimeout = loop.scheduleTask(in: timeout) { [self] in
                connectFailed(ChannelError.connectTimeout(timeout))
            }
        }
        socket.connect(to: target, queue: loop.queue) { [self] result in
            loop.run {
                switch result {
                case .success: connected()
                case .failure(let error): connectFailed(NIOErrors.io(error))
                }
            }
        }
    }

    private func connected() {
        connectTimeout?.cancel()
        connectTimeout = nil
        guard let promise = connectPromise, !closed else { return }
        connectPromise = nil
        becomeActive(promise: promise)
    }

    private func connectFailed(_ error: any Error) {
        connectTimeout?.cancel()
        connectTimeout = nil
        guard let promise = connectPromise else { return }
        connectPromise = nil
        promise.fail(error)
        close0(error: error, mode: .all, promise: nil)
    }

    /// Connected or accepted: the addresses, `channelActive`, and the first read when
    /// `autoRead` is on.
    func becomeActive(promise: EventLoopPromise<Void>?) {
        let local = try? localAddress0()
        let remote = try? remoteAddress0()
        addresses.withLock { $0 = (local, remote) }
        activeFlag.store(true, ordering: .releasing)
        promise?.succeed(())
        pipeline.syncOperations.fireChannelActive()
        if settings.autoRead, !closed { pipeline.syncOperations.read() }
    }
}

/// A value handed to the loop and back that NIO's generic option API does not mark
/// `Sendable` (option values are plain values).
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
#endif
