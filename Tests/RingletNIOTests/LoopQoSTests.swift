#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletNIO

/// A group's loops run at its QoS, and what their handlers submit keeps it.
@Suite struct LoopQoSTests {
    @Test(arguments: [DispatchQoS.QoSClass.utility, .userInitiated])
    func handlersAndWhatTheySubmitRunAtTheGroupsQoS(_ qosClass: DispatchQoS.QoSClass) throws {
        let group = RingletEventLoopGroup(loopCount: 1, qos: DispatchQoS(qosClass: qosClass, relativePriority: 0))
        let loop = group.nextLoop()
        #expect(try bounded(loop.submit { Runtime.currentQoS.qosClass }, "a task") == qosClass)
        let submitted = loop.makePromise(of: DispatchQoS.QoSClass.self)
        loop.execute {
            // A queue of the program's own, with no QoS: the item takes its submitter's.
            DispatchQueue(label: "com.example.spawned").async { submitted.succeed(Runtime.currentQoS.qosClass) }
        }
        #expect(try bounded(submitted.futureResult, "an item a loop task submitted") == qosClass)
        // A channel's handlers run on the loop, at the same QoS.
        let server = try startEchoServer(group: group)
        final class RecordQoS: ChannelInboundHandler, @unchecked Sendable {
            typealias InboundIn = ByteBuffer
            let seen: EventLoopPromise<DispatchQoS.QoSClass>
            init(_ seen: EventLoopPromise<DispatchQoS.QoSClass>) { self.seen = seen }
            func channelRead(context: ChannelHandlerContext, data: NIOAny) { seen.succeed(Runtime.currentQoS.qosClass) }
        }
        let seen = loop.makePromise(of: DispatchQoS.QoSClass.self)
        let client = try bounded(RingletClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(RecordQoS(seen)) }
            }
            .connect(to: server.localAddress!), "connect")
        client.writeAndFlush(buffer([1, 2, 3]), promise: nil)
        #expect(try bounded(seen.futureResult, "the echo's read") == qosClass)
        try bounded(client.close(), "close")
        try bounded(server.close(), "close")
    }

    @Test func aGroupsTaskPriorityIsItsQoS() {
        #expect(RingletEventLoopGroup(loopCount: 1).taskPriority == .high)
        #expect(RingletEventLoopGroup(loopCount: 1, qos: .utility).taskPriority == .utility)
        #expect(RingletEventLoopGroup(loopCount: 1, qos: .background).taskPriority == .background)
    }
}
#endif
