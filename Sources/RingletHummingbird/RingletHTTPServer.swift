#if Hummingbird  // the package's Hummingbird trait (Package.swift): without it this module is empty
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import RingletNIO
import ServiceLifecycle
import Synchronization

/// A Hummingbird 2 responder (a `Router`'s) served over Ringlet's channels: HTTP/1 with
/// Hummingbird's own child channel (`HTTP1Channel`), accepted by a `RingletServerBootstrap`
/// on a `RingletEventLoopGroup`. A `Service`, so it runs in a `ServiceGroup` beside others
/// and stops on graceful shutdown: the listener closes, idle connections are asked to
/// quiesce (`ChannelShouldQuiesceEvent`), and `run()` returns once every connection ended.
///
/// Why a wrapper: Hummingbird's `Application` makes its server with NIOPosix's
/// `ServerBootstrap` (or Network.framework's), with no hook for another bootstrap. What
/// this type repeats of `Application.run()` — building the request context, answering an
/// unknown error with 500, the `Server` header — is what such a hook would remove.
public struct RingletHTTPServer<Responder: HTTPResponder>: Service
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    public let responder: Responder
    public let host: String
    public let port: Int
    public let group: RingletEventLoopGroup
    public let serverName: String?
    public let logger: Logger
    private let onServerRunning: @Sendable (any Channel) async -> Void

    /// Serves `router` (anything that builds a responder) on `host`:`port` (port 0: the
    /// kernel picks one; `onServerRunning` gets the listening channel, whose
    /// `localAddress` says which).
    public init<Builder: HTTPResponderBuilder>(
        router: Builder,
        host: String = "127.0.0.1",
        port: Int = 8080,
        group: RingletEventLoopGroup = .singleton,
        serverName: String? = nil,
        logger: Logger = Logger(label: "RingletHTTPServer"),
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) where Builder.Responder == Responder {
        responder = router.buildResponder()
        self.host = host
        self.port = port
        self.group = group
        self.serverName = serverName
        self.logger = logger
        self.onServerRunning = onServerRunning
    }

    public func run() async throws {
        let group = self.group
        let http1 = HTTP1Channel(responder: respond)
        let connections = OpenConnections()
        let logger = self.logger
        let server = try await RingletServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: port) { channel in
                connections.add(channel)
                return http1.setup(channel: channel, logger: logger)
            }
        logger.info("Server started and listening", metadata: ["hb.server.address": "\(server.channel.localAddress!)"])
        await onServerRunning(server.channel)
        // The connections are served in a task at the loops' QoS (the group's
        // `taskPriority`): the handlers, and the tasks and items they start, keep it. A
        // child task cannot rise above its parent's priority, so the task is a new one; it
        // inherits the task-local graceful-shutdown handler and is cancelled with run().
        let serving = Task(priority: group.taskPriority) {
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { tasks in
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            tasks.addTask {
                                await http1.handle(value: connection, logger: logger)
                                connections.remove(connection.channel)
                            }
                        }
                    }
                }
            } onGracefulShutdown: {
                server.channel.close(promise: nil)
                connections.quiesce()
            }
        }
        try await withTaskCancellationHandler {
            try await serving.value
        } onCancel: {
            serving.cancel()
        }
    }

    /// What `Application.run()` does with each request, less its date cache.
    private func respond(_ request: Request, _ writer: consuming ResponseWriter, _ channel: any Channel) async throws {
        let context = Responder.Context(source: .init(channel: channel, logger: logger))
        var response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch let error as HTTPParserError {
            throw error
        } catch {
            logger.debug("Unrecognised Error", metadata: ["error.type": "\(error)"])
            response = Response(status: .internalServerError, body: .init())
        }
        if let serverName { response.headers[.server] = serverName }
        try await writer.write(response: response.head, body: response.body)
    }
}

/// The connections being served, so that a shutdown can ask each to finish.
final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) { channels.withLock { $0[ObjectIdentifier(channel)] = channel } }

    func remove(_ channel: any Channel) { channels.withLock { $0[ObjectIdentifier(channel)] = nil } }

    /// Asks every open connection to close once its request in progress is answered.
    func quiesce() {
        for channel in channels.withLock({ Array($0.values) }) {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }
}
#endif
