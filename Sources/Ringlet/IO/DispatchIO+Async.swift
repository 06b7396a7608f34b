#if canImport(_Concurrency)
import _Concurrency

// DispatchIO for async code: a whole read or write awaited, the same operation on the
// ring as the handler forms (Architecture, "The path of a read"), with the task resumed
// once, from the done handler (AwaitedOperation.swift). The names are the handler
// forms' without the handler, so a port moves from one to the other in place; Dispatch
// has no async forms, on Linux or on Darwin, for them to collide with.
extension DispatchIO {
    #if hasFeature(Embedded)
    /// What the async forms throw. Embedded Swift has no `any Error`: an
    /// ``OperationError`` only, whose `isTaskCancellation` stands for a cancelled task.
    public typealias AsyncFailure = OperationError
    #else
    /// What the async forms throw: ``OperationError`` for an errno, `CancellationError`
    /// when the awaiting task was cancelled.
    public typealias AsyncFailure = any Error
    #endif

    /// Reads `length` bytes (Int.max: to the end) at `offset` (ignored by `.stream`
    /// channels) and returns them all, in order: on a pipe or socket, up to `length`
    /// bytes or the end (the writer closed it).
    ///
    /// The read is the operation `read(offset:length:queue:ioHandler:)` makes, its
    /// handler on a global queue of the task's priority (so its requests carry that
    /// I/O priority). Cancelling the task cancels the read's requests on the ring; the
    /// call then throws `CancellationError`, once the read is over (no part of it runs
    /// later). An errno throws ``OperationError`` carrying it, the fd and the bytes read
    /// before it. Cost: the operation, one continuation, and the bytes held until the
    /// end (bounded by `length`; a whole read of a large file holds it all).
    public func read(offset: Int, length: Int) async throws(AsyncFailure) -> DispatchData {
        let queue = DispatchIO.queueForTask()
        let outcome = await AwaitedOperation.run { handler in
            read(offset: offset, length: length, queue: queue, endsWhenDrained: false, handler: handler)
        }
        if outcome.error != 0 { throw failure(outcome, isWrite: false) }
        return outcome.data
    }

    /// Writes `data` at `offset` (ignored by `.stream` channels and O_APPEND files)
    /// and returns once all of it is written. An errno throws ``OperationError`` with
    /// the bytes not written; cancelling the task cancels the write's requests and
    /// throws `CancellationError` once it is over (bytes already written stay).
    public func write(offset: Int, data: DispatchData) async throws(AsyncFailure) {
        let queue = DispatchIO.queueForTask()
        let outcome = await AwaitedOperation.run { handler in
            startWrite(offset: offset, data: data, queue: queue, handler: handler)
        }
        if outcome.error != 0 { throw failure(outcome, isWrite: true) }
    }

    /// `read(fromFileDescriptor:maxLength:runningHandlerOn:handler:)` awaited: up to
    /// `maxLength` bytes from the descriptor's position — on a pipe or socket, the
    /// first bytes and whatever else is there then, as Dispatch's form. Its one handler
    /// runs on `queue` (whose QoS the requests carry); the task resumes on its own
    /// executor. Throws ``OperationError`` (with the bytes read before the errno) or,
    /// when the task is cancelled, `CancellationError` once the read is over.
    public class func read(fromFileDescriptor fd: Int32, maxLength: Int,
                           runningHandlerOn queue: DispatchQueue) async throws(AsyncFailure) -> DispatchData {
        let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue, cleanupHandler: { _ in })
        let outcome = await AwaitedOperation.run { handler in
            channel.read(offset: 0, length: maxLength, queue: queue, endsWhenDrained: true, handler: handler)
        }
        channel.close()
        if outcome.error != 0 { throw channel.failure(outcome, isWrite: false) }
        return outcome.data
    }

    /// `write(toFileDescriptor:data:runningHandlerOn:handler:)` awaited: all of `data`
    /// at the descriptor's position (concurrent writes to one descriptor each go whole,
    /// one after another). Throws ``OperationError`` with the bytes not written, or
    /// `CancellationError` when the task is cancelled, once the write is over.
    public class func write(toFileDescriptor fd: Int32, data: DispatchData,
                            runningHandlerOn queue: DispatchQueue) async throws(AsyncFailure) {
        let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue, cleanupHandler: { _ in })
        let outcome = await AwaitedOperation.run { handler in
            channel.startWrite(offset: 0, data: data, queue: queue, handler: handler)
        }
        channel.close()
        if outcome.error != 0 { throw channel.failure(outcome, isWrite: true) }
    }

    // MARK: Helpers

    /// The queue the handler of an awaited operation runs on: the global queue of
    /// the task's priority (`TaskPriority` values are QoS classes' raw values).
    static func queueForTask() -> DispatchQueue {
        DispatchQueue.global(qos: DispatchQoS.QoSClass(rawValue: UInt32(Task.currentPriority.rawValue)) ?? .default)
    }

    /// The error an ended operation throws.
    func failure(_ outcome: AwaitedOperation.Outcome, isWrite: Bool) -> AsyncFailure {
        #if !hasFeature(Embedded)
        if outcome.cancelledByTask { return CancellationError() }
        #endif
        return OperationError(fileDescriptor: fileDescriptor, errno: Errno(rawValue: outcome.error), isWrite: isWrite,
                              data: outcome.data, isTaskCancellation: outcome.cancelledByTask)
    }
}
#endif
