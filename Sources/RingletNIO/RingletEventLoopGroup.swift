#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import Dispatch
import NIOCore
@_spi(RingletNet) import Ringlet
import Synchronization

/// SwiftNIO's `EventLoopGroup` on Ringlet: where a server made
/// `MultiThreadedEventLoopGroup(numberOfThreads:)`, it makes
/// `RingletEventLoopGroup(loopCount:)`. Its loops are serial queues on the runtime's fixed
/// pool (no thread is created), at the group's QoS, and its channels do their I/O on the
/// runtime's ring (on epoll where io_uring is refused).
// @unchecked Sendable: the loops are set once; the rest is atomic.
public final class RingletEventLoopGroup: EventLoopGroup, @unchecked Sendable {
    /// The loops, in the order `next()` hands them out.
    public let loops: [RingletEventLoop]
    /// The QoS the loops and the work their handlers submit run at.
    public let qos: Ringlet.DispatchQoS
    private let nextIndex = Atomic<Int>(0)
    private let shutDown = Atomic<Bool>(false)

    /// One loop per core of the runtime's configuration.
    public static var defaultLoopCount: Int { max(1, Runtime.current.configuration.cores) }

    /// A group shared by the process, made on first use and never shut down (as NIO's
    /// `MultiThreadedEventLoopGroup.singleton`): user-initiated, one loop per core.
    public static let singleton = RingletEventLoopGroup()

    /// `loopCount` loops (at least one; default: one per core) at `qos` (default:
    /// user-initiated, as a server answering people should be).
    public init(loopCount: Int = RingletEventLoopGroup.defaultLoopCount, qos: Ringlet.DispatchQoS = .userInitiated) {
        let count = max(1, loopCount)
        self.qos = qos
        loops = (0..<count).map { RingletEventLoop(name: "ringlet-nio-\($0 + 1) of \(count)", qos: qos) }
    }

    public func next() -> EventLoop {
        loops[nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// The loop `next()` would give, typed.
    public func nextLoop() -> RingletEventLoop {
        loops[nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
    }

    public func any() -> EventLoop {
        if let current = loops.first(where: { $0.inEventLoop }) { return current }
        return next()
    }

    public func makeIterator() -> EventLoopIterator { EventLoopIterator(loops) }

    /// Channels open on the group's loops now.
    public var openChannelCount: Int { loops.reduce(0) { $0 + $1.openChannelCount.load(ordering: .relaxed) } }

    /// Closes every channel open on the group's loops, fails tasks scheduled from now on
    /// with `EventLoopError.shutdown`, then calls `callback` on `queue`. The loops are
    /// queues of the runtime, which goes on: nothing else stops. A second call answers
    /// `EventLoopError.shutdown`.
    public func shutdownGracefully(queue: Dispatch.DispatchQueue, _ callback: @escaping @Sendable (Error?) -> Void) {
        if shutDown.exchange(true, ordering: .acquiringAndReleasing) {
            queue.async { callback(EventLoopError.shutdown) }
            return
        }
        let remaining = SharedCount(loops.count)
        for loop in loops {
            loop.closeAllChannels {
                loop.isShutDown.store(true, ordering: .releasing)
                if remaining.countDown() { queue.async { callback(nil) } }
            }
        }
    }

    /// The group's QoS as a task priority (`TaskPriority`'s values are the QoS classes'):
    /// what a server gives the tasks that serve its connections, so that they, and what
    /// they start, keep the loops' QoS.
    public var taskPriority: TaskPriority {
        switch qos.qosClass {
        case .userInteractive: return TaskPriority(rawValue: 0x21)
        case .userInitiated: return .high
        case .default, .unspecified: return .medium
        case .utility: return .utility
        case .background: return .background
        }
    }

    public var description: String { "RingletEventLoopGroup(\(loops.count) loops, \(qos.qosClass))" }
}
#endif
