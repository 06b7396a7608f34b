@_spi(RingletNet) import Ringlet

extension ServiceSession {
    /// Sends `payload` as a request and returns the reply; throws why none came (the
    /// session ended, the service dropped the request, the payload is over the limit).
    public func sendWithReply(_ payload: DispatchData) async throws(ServiceError) -> ServiceMessage {
        // The reply goes through a locked box, the continuation only wakes the task: a
        // reply that comes before the task suspends lets the task run on at once through
        // an atomic of the toolchain's concurrency library, which ThreadSanitizer cannot
        // see (it is not built with it), and the reply's fields then read as a data race
        // in make test's TSan stage. The lock is the order it can see.
        let box = ReplyBox()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            send(payload) { result in
                box.put(result)
                continuation.resume()
            }
        }
        return try box.take().get()
    }
}

/// The reply of one awaited request, handed from the reply handler to the task.
private final class ReplyBox: @unchecked Sendable {
    private let lock = ServiceLock()
    private var result: Result<ServiceMessage, ServiceError>?

    func put(_ value: Result<ServiceMessage, ServiceError>) { lock.withLock { result = value } }

    /// Called once the continuation resumed, so after `put`.
    func take() -> Result<ServiceMessage, ServiceError> {
        guard let result = lock.withLock({ result }) else {
            preconditionFailure("ServiceSession.sendWithReply: the task was resumed before its reply arrived")
        }
        return result
    }
}
