#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import Dispatch
import Glibc
import NIOCore
@_spi(RingletNet) import Ringlet
import Synchronization

/// An NIO event loop that is a Ringlet serial queue: its tasks, its scheduled tasks and
/// the handlers of its channels run on the runtime's fixed workers, one at a time, at the
/// loop's QoS; there is no thread of its own and no epoll loop. Timers are Ringlet's
/// coalescing timers (`asyncAfter`), and as an `NIOSerialEventLoopExecutor` it is also the
/// serial executor of tasks and actors that ask for it, with no hop between the two.
///
/// Made by `RingletEventLoopGroup`, which owns it: `shutdownGracefully` is the group's.
// @unchecked Sendable: the queue serialises what runs on the loop; the rest is atomic or
// set once.
public final class RingletEventLoop: EventLoop, NIOSerialEventLoopExecutor, @unchecked Sendable {
    /// The serial queue the loop is.
    public let queue: Ringlet.DispatchQueue
    /// "ringlet-nio-2 of 4": for messages.
    public let name: String
    /// The thread running one of the loop's items now (pthread_self), or 0.
    private let runningThread = Atomic<UInt>(0)
    /// The group shut down: new scheduled tasks fail with `EventLoopError.shutdown`.
    let isShutDown = Atomic<Bool>(false)
    /// The loop's open channels (on the loop), closed by the group's shutdown.
    private var channels: [ObjectIdentifier: any Channel] = [:]
    /// Channels opened and not yet closed, from any thread (statistics and the leak tests).
    let openChannelCount = Atomic<Int>(0)

    init(name: String, qos: Ringlet.DispatchQoS) {
        self.name = name
        queue = Ringlet.DispatchQueue(label: name, qos: qos)
    }

    // MARK: Running on the loop

    public var inEventLoop: Bool { runningThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Runs `body` as the loop: everything that runs on the queue goes through here, so
    /// `inEventLoop` holds inside it.
    @inline(__always)
    func run(_ body: () -> Void) {
        let previous = runningThread.exchange(UInt(pthread_self()), ordering: .relaxed)
        body()
        runningThread.store(previous, ordering: .relaxed)
    }

    public func execute(_ task: @escaping @Sendable () -> Void) {
        queue.async { [self] in run(task) }
    }

    // MARK: Scheduled tasks: Ringlet's timers

    public func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise: EventLoopPromise<T> = makePromise()
        if isShutDown.load(ordering: .acquiring) {
            promise.fail(EventLoopError.shutdown)
            return Scheduled(promise: promise, cancellationTask: {})
        }
        let item = Ringlet.DispatchWorkItem { [self] in
            run {
                do { promise.assumeIsolated().succeed(try task()) } catch { promise.fail(error) }
            }
        }
        queue.asyncAfter(deadline: Self.dispatchTime(deadline), execute: item)
        return Scheduled(promise: promise) {
            item.cancel()
            promise.fail(EventLoopError.cancelled)  // ignored when the task ran first
        }
    }

    public func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: .now() + delay, task)
    }

    /// NIO's deadlines and Ringlet's `DispatchTime` are both CLOCK_MONOTONIC nanoseconds.
    static func dispatchTime(_ deadline: NIODeadline) -> Ringlet.DispatchTime {
        let nanoseconds = deadline.uptimeNanoseconds
        if nanoseconds >= UInt64(Int64.max) { return .distantFuture }
        return Ringlet.DispatchTime(uptimeNanoseconds: max(nanoseconds, 1))
    }

    // MARK: Channels

    func opened(_ channel: any Channel) {
        assertInEventLoop()
        channels[ObjectIdentifier(channel)] = channel
        openChannelCount.add(1, ordering: .relaxed)
    }

    func closed(_ channel: any Channel) {
        assertInEventLoop()
        if channels.removeValue(forKey: ObjectIdentifier(channel)) != nil {
            openChannelCount.subtract(1, ordering: .relaxed)
        }
    }

    /// Closes every open channel of the loop; `done` runs once all are closed.
    func closeAllChannels(_ done: @escaping @Sendable () -> Void) {
        execute { [self] in
            let open = Array(channels.values)
            if open.isEmpty { return done() }
            let closes = open.map { channel in
                channel.close().recover { _ in }.flatMap { channel.closeFuture }.recover { _ in }
            }
            EventLoopFuture.andAllComplete(closes, on: self).whenComplete { _ in done() }
        }
    }

    // MARK: Shutting down: the group's

    /// A loop shuts down with its group: this answers `EventLoopError.unsupportedOperation`.
    public func shutdownGracefully(queue: Dispatch.DispatchQueue, _ callback: @escaping @Sendable (Error?) -> Void) {
        queue.async { callback(EventLoopError.unsupportedOperation) }
    }

    public var description: String { "RingletEventLoop(\(name))" }
}
#endif
