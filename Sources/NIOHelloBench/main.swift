// `make bench-http`'s baseline server: HelloRoutes on Hummingbird's own server over
// NIOPosix — `--loops N` sets MultiThreadedEventLoopGroup's thread count (0: NIO's default,
// one per core); `--echo-port N` adds a TCP echo server. No Ringlet in this process. Prints its port once serving.
#if Hummingbird
import Glibc
import Hummingbird
import Logging
import NIOCore
import NIOPosix

var port = 8080, loops = 0
var echoPort: Int?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    guard let value = arguments.popFirst().flatMap(Int.init) else {
        fatalError("NIOHelloBench: \(argument) takes a number")
    }
    switch argument {
    case "--port": port = value
    case "--loops": loops = value
    case "--echo-port": echoPort = value
    default: fatalError("NIOHelloBench: unknown argument \(argument); it takes --port N --loops N --echo-port N")
    }
}
let group = loops > 0 ? MultiThreadedEventLoopGroup(numberOfThreads: loops) : MultiThreadedEventLoopGroup.singleton
// --echo-port: a TCP echo server beside the HTTP one (make bench-http's echo row).
if let echoPort {
    let echo = try await ServerBootstrap(group: group)
        .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
        }
        .bind(host: "127.0.0.1", port: echoPort).get()
    print("NIOHelloBench: echo on 127.0.0.1:\(echo.localAddress?.port ?? 0)")
}
var logger = Logger(label: "NIOHelloBench")
logger.logLevel = .notice
let app = Application(router: HelloRoutes.router(),
                      configuration: .init(address: .hostname("127.0.0.1", port: port)),
                      onServerRunning: { channel in
                          print("NIOHelloBench: serving http://127.0.0.1:\(channel.localAddress?.port ?? 0)/")
                          fflush(nil)  // the serving line reaches make bench-http's pipe at once
                      },
                      eventLoopGroupProvider: .shared(group), logger: logger)
try await app.runService()
#else
print("NIOHelloBench is built with the package's Hummingbird trait: run it with `make bench-http`")
#endif
