#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
import NIOHTTP1
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletNIO

/// The async bootstraps and NIO's HTTP/1 server on Ringlet's channels.
@Suite struct AsyncChannelTests {
    @Test func anAsyncServerEchoesToAnAsyncClient() async throws {
        let server = try await RingletServerBootstrap(group: testGroup)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let port = try #require(server.channel.localAddress?.port)
        let serving = Task {
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    Task {
                        try await connection.executeThenClose { inbound, outbound in
                            for try await chunk in inbound { try await outbound.write(chunk) }
                        }
                    }
                }
            }
        }
        let client = try await RingletClientBootstrap(group: testGroup)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let sent = pattern(100_000)
        let echoed = try await client.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: sent))
            var received: [UInt8] = []
            for try await chunk in inbound {
                received += chunk.readableBytesView
                if received.count >= sent.count { break }
            }
            return received
        }
        #expect(echoed == sent)
        server.channel.close(promise: nil)
        _ = try? await serving.value
    }

    @Test func nioHTTP1ServesAPage() async throws {
        let server = try await RingletServerBootstrap(group: testGroup)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let port = try #require(server.channel.localAddress?.port)
        let serving = Task {
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    Task {
                        try await connection.executeThenClose { inbound, outbound in
                            for try await part in inbound {
                                guard case .end = part else { continue }
                                let body = ByteBuffer(string: "hello from the ring\n")
                                var head = HTTPResponseHead(version: .http1_1, status: .ok)
                                head.headers.add(name: "content-length", value: "\(body.readableBytes)")
                                try await outbound.write(.head(head))
                                try await outbound.write(.body(.byteBuffer(body)))
                                try await outbound.write(.end(nil))
                            }
                        }
                    }
                }
            }
        }
        // A plain TCP client: the request's bytes as a browser sends them.
        let collector = Collector()
        let client = try await boundedAsync(RingletClientBootstrap(group: testGroup)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: "127.0.0.1", port: port), "connect")
        try await boundedAsync(client.writeAndFlush(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")), "the request")
        let expected = "HTTP/1.1 200 OK\r\ncontent-length: 20\r\n\r\nhello from the ring\n"
        let bytes = try await boundedAsync(collector.received(expected.utf8.count, on: client.eventLoop), "the response")
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        try await boundedAsync(client.close(), "close")
        server.channel.close(promise: nil)
        _ = try? await serving.value
    }
}
#endif
