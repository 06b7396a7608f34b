#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore

/// NIO's `ClientBootstrap` for Ringlet's loops: options, an initializer, then `connect`.
/// The connection's channel lives on the next loop of `group`.
public final class RingletClientBootstrap {
    private let group: RingletEventLoopGroup
    private var initializer: (@Sendable (Channel) -> EventLoopFuture<Void>)?
    private var options = ChannelOptions.Storage()

    public init(group: RingletEventLoopGroup) {
        self.group = group
    }

    /// A bootstrap when `group` is a `RingletEventLoopGroup` (nil otherwise).
    public convenience init?(validatingGroup group: EventLoopGroup) {
        guard let ours = group as? RingletEventLoopGroup else { return nil }
        self.init(group: ours)
    }

    public func channelInitializer(_ initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> Self {
        self.initializer = initializer
        return self
    }

    public func channelOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> Self {
        options.append(key: option, value: value)
        return self
    }

    /// How long a connect may take before it fails with `ChannelError.connectTimeout`
    /// (default 10 s).
    public func connectTimeout(_ timeout: TimeAmount) -> Self {
        channelOption(ChannelOptions.connectTimeout, value: timeout)
    }

    /// Connects to `host`: a numeric address, or a name resolved here with getaddrinfo
    /// (which may block the calling thread: call it off the loops, or pass an address).
    public func connect(host: String, port: Int) -> EventLoopFuture<Channel> {
        do {
            let address = try (try? SocketAddress(ipAddress: host, port: port))
                ?? SocketAddress.makeAddressResolvingHost(host, port: port)
            return connect(to: address)
        } catch {
            return group.next().makeFailedFuture(error)
        }
    }

    public func connect(unixDomainSocketPath path: String) -> EventLoopFuture<Channel> {
        do {
            return connect(to: try SocketAddress(unixDomainSocketPath: path))
        } catch {
            return group.next().makeFailedFuture(error)
        }
    }

    public func connect(to address: SocketAddress) -> EventLoopFuture<Channel> {
        let (loop, channel) = makeChannel()
        let initializer = self.initializer
        let options = self.channelOptions
        return loop.flatSubmit {
            options.applyAllChannelOptions(to: channel).flatMap {
                initializer?(channel) ?? loop.makeSucceededVoidFuture()
            }.flatMap {
                channel.register()
            }.flatMap {
                channel.connect(to: address)
            }.map {
                channel as Channel
            }.flatMapError { error in
                channel.close(promise: nil)
                return loop.makeFailedFuture(error)
            }
        }
    }

    // MARK: Shared with the async forms

    func makeChannel() -> (RingletEventLoop, RingletSocketChannel) {
        let loop = group.nextLoop()
        return (loop, RingletSocketChannel(loop: loop, socket: nil, parent: nil))
    }

    var channelOptions: ChannelOptions.Storage { options }
}
#endif
