#if Hummingbird  // the package's Hummingbird trait: `make serve` and `make bench-http` turn it on
// The echo server of `make bench-http`'s echo row, written once: RingletHello runs it on
// RingletNIO, NIOHelloBench (which links this file) on NIOPosix.
import NIOCore

/// Sends back what it reads, flushing once per read batch.
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
#endif
