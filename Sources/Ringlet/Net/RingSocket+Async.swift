#if canImport(_Concurrency)
import _Concurrency

// The awaiting forms: the request's result resumes the task straight from the
// manager thread (no handler queue between), and cancelling the task cancels the
// request, which then ends with a cancellation — so when the call returns or throws,
// the request is over.
@_spi(RingletNet)
extension RingSocket {
    public func connect(to address: SocketAddress) async throws(SocketError) {
        try await AwaitedSocketRequest.run { done in connectRequest(to: address, queue: nil, done) }
    }

    public func receive(upTo maxBytes: Int, controlBytes: Int = 0) async throws(SocketError) -> ReceivedMessage {
        try await AwaitedSocketRequest.run { done in
            receiveRequest(upTo: maxBytes, controlBytes: controlBytes, queue: nil, done)
        }
    }

    @discardableResult
    public func send(_ data: DispatchData, control: [ControlMessage] = []) async throws(SocketError) -> Int {
        try await AwaitedSocketRequest.run { done in sendRequest(data, control: control, queue: nil, done) }
    }
}

/// One socket request awaited by a task.
// @unchecked Sendable: `request` and `cancelled` under `lock`.
final class AwaitedSocketRequest: @unchecked Sendable {
    private let lock = FutexLock()
    private var request: SocketRequest?
    private var cancelled = false

    deinit { lock.deallocate() }

    static func run<Value: Sendable>(
        _ start: (_ done: @escaping (Result<Value, SocketError>) -> Void) -> SocketRequest
    ) async throws(SocketError) -> Value {
        let awaited = AwaitedSocketRequest()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, SocketError>, Never>) in
                let request = start { continuation.resume(returning: $0) }
                let cancelNow = awaited.lock.withLock { () -> Bool in
                    awaited.request = request
                    return awaited.cancelled
                }
                if cancelNow { request.cancel() }
            }
        } onCancel: {
            let request = awaited.lock.withLock { () -> SocketRequest? in
                awaited.cancelled = true
                return awaited.request
            }
            request?.cancel()
        }
        awaited.lock.withLock { awaited.request = nil }
        return try result.get()
    }
}
#endif
