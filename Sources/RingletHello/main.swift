// `make serve`: the hello example — a Hummingbird 2 router served on Ringlet's loops and
// ring (RingletHTTPServer), on 127.0.0.1:8080 (`--port N`, 0: any free port; it prints
// the one it got; `--echo-port N` adds a TCP echo server). GET / says hello; GET /json gives about 4 KiB of JSON; GET /qos says at
// which QoS the request was served. Stops on
// SIGINT or SIGTERM. Built with the package's Hummingbird trait only.
#if Hummingbird
import Glibc
import Hummingbird
import Logging
import NIOCore
@_spi(RingletNet) import Ringlet
import RingletHummingbird
import RingletNIO
import ServiceLifecycle

var port = 8080
var echoPort: Int?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    guard argument == "--port" || argument == "--echo-port" else {
        fatalError("RingletHello: unknown argument \(argument); it takes --port N and --echo-port N")
    }
    guard let value = arguments.popFirst().flatMap(Int.init), (0...65535).contains(value) else {
        fatalError("RingletHello: \(argument) takes a port number, 0 to 65535")
    }
    if argument == "--port" { port = value } else { echoPort = value }
}
// --echo-port: a TCP echo server beside the HTTP one (make bench-http's echo row).
if let echoPort {
    let echo = try await RingletServerBootstrap(group: .singleton)
        .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
        }
        .bind(host: "127.0.0.1", port: echoPort).get()
    print("RingletHello: echo on 127.0.0.1:\(echo.localAddress?.port ?? 0)")
}
var logger = Logger(label: "RingletHello")
logger.logLevel = .notice
let router = HelloRoutes.router()
// GET /qos: the QoS the request's handler runs at, its task's priority, and the QoS
// of an item it submits — the group's (user-initiated) all three (serve-check).
router.get("/qos") { _, _ -> String in
    let spawned = await withCheckedContinuation { done in
        DispatchQueue(label: "com.example.hello.spawned").async { done.resume(returning: Runtime.currentQoS.qosClass) }
    }
    return "handler \(Runtime.currentQoS.qosClass), task \(Task.currentPriority), spawned \(spawned)\n"
}
let server = RingletHTTPServer(router: router, host: "127.0.0.1", port: port,
                               serverName: "RingletHello", logger: logger) { channel in
    print("RingletHello: serving http://127.0.0.1:\(channel.localAddress?.port ?? 0)/ on Ringlet "
          + "(\(Runtime.statistics.backend)), \(RingletEventLoopGroup.singleton.loops.count) loops, "
          + "pool \(Runtime.statistics.workers) workers")
    fflush(nil)  // the serving line reaches a pipe (make bench-http, serve-check) at once
}
// SIGINT and SIGTERM through Ringlet's signal sources: ServiceLifecycle's own signal watch
// would start two threads of the toolchain's Dispatch beside Ringlet's fixed set.
let services = ServiceGroup(services: [server], logger: logger)
let signals = ShutdownSignals(of: services)
try await services.run()
withExtendedLifetime(signals) {}
#else
print("RingletHello is built with the package's Hummingbird trait: run it with `make serve`")
#endif
