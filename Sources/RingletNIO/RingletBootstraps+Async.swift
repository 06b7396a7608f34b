#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore

// The async forms of the bootstraps, as NIOPosix's: `bind` gives an `NIOAsyncChannel` of
// whatever the child initializer makes of each connection (typically an
// `NIOAsyncChannel` of the connection's messages), `connect` gives what the initializer
// made. Back-pressure is NIO's: a connection's reads wait while its inbound stream is full.

extension RingletServerBootstrap {
    /// Binds to `host` (numeric) and `port`; each accepted connection goes through
    /// `childChannelInitializer` on its own loop and arrives on the returned channel's
    /// inbound stream.
    public func bind<Output: Sendable>(
        host: String,
        port: Int,
        serverBackPressureStrategy: NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark? = nil,
        childChannelInitializer: @escaping @Sendable (Channel) -> EventLoopFuture<Output>
    ) async throws -> NIOAsyncChannel<Output, Never> {
        try await bind(to: SocketAddress(ipAddress: host, port: port),
                       serverBackPressureStrategy: serverBackPressureStrategy,
                       childChannelInitializer: childChannelInitializer)
    }

    public func bind<Output: Sendable>(
        to address: SocketAddress,
        serverBackPressureStrategy: NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark? = nil,
        childChannelInitializer: @escaping @Sendable (Channel) -> EventLoopFuture<Output>
    ) async throws -> NIOAsyncChannel<Output, Never> {
        let (loop, channel) = makeServerChannel()
        let setUp = serverSetUp
        return try await loop.flatSubmit {
            setUp(channel).flatMapThrowing {
                try channel.pipeline.syncOperations.addHandler(setUp.acceptor(nil))
                // NIOPosix's own bootstrap wraps its server channel the same way.
                return try NIOAsyncChannel<Output, Never>._wrapAsyncChannelWithTransformations(
                    wrappingChannelSynchronously: channel,
                    backPressureStrategy: serverBackPressureStrategy,
                    channelReadTransformation: { child in
                        child.eventLoop.flatSubmit { childChannelInitializer(child) }
                    })
            }.flatMap { asyncChannel in
                channel.register().flatMap { channel.bind(to: address) }.map { asyncChannel }
            }.flatMapError { error in
                channel.close(promise: nil)
                return loop.makeFailedFuture(error)
            }
        }.get()
    }
}

extension RingletClientBootstrap {
    /// Connects to `host` (numeric, or a name resolved with getaddrinfo on the calling
    /// thread) and `port`; gives what `channelInitializer` made of the channel.
    public func connect<Output: Sendable>(
        host: String,
        port: Int,
        channelInitializer: @escaping @Sendable (Channel) -> EventLoopFuture<Output>
    ) async throws -> Output {
        let address = try (try? SocketAddress(ipAddress: host, port: port))
            ?? SocketAddress.makeAddressResolvingHost(host, port: port)
        return try await connect(to: address, channelInitializer: channelInitializer)
    }

    public func connect<Output: Sendable>(
        to address: SocketAddress,
        channelInitializer: @escaping @Sendable (Channel) -> EventLoopFuture<Output>
    ) async throws -> Output {
        let (loop, channel) = makeChannel()
        let options = self.channelOptions
        return try await loop.flatSubmit {
            options.applyAllChannelOptions(to: channel).flatMap {
                channelInitializer(channel)
            }.flatMap { output in
                channel.register().flatMap { channel.connect(to: address) }.map { output }
            }.flatMapError { error in
                channel.close(promise: nil)
                return loop.makeFailedFuture(error)
            }
        }.get()
    }
}
#endif
