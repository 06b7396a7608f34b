#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore

/// NIO's `ServerBootstrap` for Ringlet's loops: the same calls, in the same order —
/// options for the server and its children, an initializer for each, then `bind`. The
/// server channel listens on a loop of `group`; each accepted connection is a channel on
/// the next loop of `childGroup`.
///
///     let server = try RingletServerBootstrap(group: group)
///         .childChannelInitializer { channel in channel.pipeline.addHandler(EchoHandler()) }
///         .bind(host: "127.0.0.1", port: 8080).wait()
public final class RingletServerBootstrap {
    private let group: RingletEventLoopGroup
    private let childGroup: RingletEventLoopGroup
    private var serverInitializer: (@Sendable (Channel) -> EventLoopFuture<Void>)?
    private var childInitializer: (@Sendable (Channel) -> EventLoopFuture<Void>)?
    private var serverOptions = ChannelOptions.Storage()
    private var childOptions = ChannelOptions.Storage()

    public init(group: RingletEventLoopGroup, childGroup: RingletEventLoopGroup? = nil) {
        self.group = group
        self.childGroup = childGroup ?? group
    }

    /// A bootstrap when `group` is a `RingletEventLoopGroup` (nil otherwise), as NIO's
    /// `ServerBootstrap(validatingGroup:)`.
    public convenience init?(validatingGroup group: EventLoopGroup, childGroup: EventLoopGroup? = nil) {
        guard let ours = group as? RingletEventLoopGroup else { return nil }
        let children = childGroup.map { $0 as? RingletEventLoopGroup }
        if case .some(.none) = children { return nil }
        self.init(group: ours, childGroup: children ?? nil)
    }

    public func serverChannelInitializer(_ initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> Self {
        serverInitializer = initializer
        return self
    }

    public func childChannelInitializer(_ initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> Self {
        childInitializer = initializer
        return self
    }

    public func serverChannelOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> Self {
        serverOptions.append(key: option, value: value)
        return self
    }

    public func childChannelOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> Self {
        childOptions.append(key: option, value: value)
        return self
    }

    /// Binds to `host` (a numeric address: "127.0.0.1", "::1", "0.0.0.0") and `port`
    /// (0: the kernel picks one; the channel's `localAddress` says which).
    public func bind(host: String, port: Int) -> EventLoopFuture<Channel> {
        do {
            return bind(to: try SocketAddress(ipAddress: host, port: port))
        } catch {
            return group.next().makeFailedFuture(error)
        }
    }

    public func bind(unixDomainSocketPath path: String) -> EventLoopFuture<Channel> {
        do {
            return bind(to: try SocketAddress(unixDomainSocketPath: path))
        } catch {
            return group.next().makeFailedFuture(error)
        }
    }

    public func bind(to address: SocketAddress) -> EventLoopFuture<Channel> {
        let (loop, channel) = makeServerChannel()
        let setUp = serverSetUp
        let childInitializer = self.childInitializer
        return loop.flatSubmit {
            setUp(channel).flatMapThrowing {
                try channel.pipeline.syncOperations.addHandler(setUp.acceptor(childInitializer))
            }.flatMap {
                channel.register()
            }.flatMap {
                channel.bind(to: address)
            }.map {
                channel as Channel
            }.flatMapError { error in
                channel.close(promise: nil)
                return loop.makeFailedFuture(error)
            }
        }
    }

    // MARK: Shared with the async forms

    func makeServerChannel() -> (RingletEventLoop, RingletServerSocketChannel) {
        let loop = group.nextLoop()
        return (loop, RingletServerSocketChannel(loop: loop, childGroup: childGroup))
    }

    var serverSetUp: ServerSetUp {
        ServerSetUp(serverOptions: serverOptions, serverInitializer: serverInitializer, childOptions: childOptions)
    }
}

/// What a bind does to the server channel before it registers: its options, then its
/// initializer; and the acceptor for its children.
struct ServerSetUp: Sendable {
    let serverOptions: ChannelOptions.Storage
    let serverInitializer: (@Sendable (Channel) -> EventLoopFuture<Void>)?
    let childOptions: ChannelOptions.Storage

    func callAsFunction(_ channel: Channel) -> EventLoopFuture<Void> {
        serverOptions.applyAllChannelOptions(to: channel).flatMap {
            serverInitializer?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
        }
    }

    func acceptor(_ childInitializer: (@Sendable (Channel) -> EventLoopFuture<Void>)?) -> Acceptor {
        Acceptor(childInitializer: childInitializer, childOptions: childOptions)
    }
}

/// Sets up each accepted connection on its own loop (its options, the child initializer),
/// then passes it on down the server pipeline, whose end registers and activates it
/// (`RingletServerSocketChannel.channelRead0`). One that fails to set up is closed, and
/// the failure reaches the server pipeline's `errorCaught`.
final class Acceptor: ChannelInboundHandler, Sendable {
    typealias InboundIn = Channel
    typealias InboundOut = Channel

    private let childInitializer: (@Sendable (Channel) -> EventLoopFuture<Void>)?
    private let childOptions: ChannelOptions.Storage

    init(childInitializer: (@Sendable (Channel) -> EventLoopFuture<Void>)?, childOptions: ChannelOptions.Storage) {
        self.childInitializer = childInitializer
        self.childOptions = childOptions
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        let serverLoop = context.eventLoop
        let childInitializer = self.childInitializer
        let childOptions = self.childOptions
        let setUp = child.eventLoop.flatSubmit {
            childOptions.applyAllChannelOptions(to: child).flatMap {
                childInitializer?(child) ?? child.eventLoop.makeSucceededVoidFuture()
            }
        }.hop(to: serverLoop)
        let context = NIOLoopBound(context, eventLoop: serverLoop)
        setUp.whenComplete { result in
            let context = context.value
            switch result {
            case .success where context.channel.isActive:
                context.fireChannelRead(NIOAny(child))
            case .success:
                child.close(promise: nil)
            case .failure(let error):
                child.close(promise: nil)
                context.fireErrorCaught(error)
            }
        }
    }
}
#endif
