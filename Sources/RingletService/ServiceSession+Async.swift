@_spi(RingletNet) import Ringlet

extension ServiceSession {
    /// Sends `payload` as a request and returns the reply; throws why none came (the
    /// session ended, the service dropped the request, the payload is over the limit).
    public func sendWithReply(_ payload: DispatchData) async throws(ServiceError) -> ServiceMessage {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<ServiceMessage, ServiceError>, Never>) in
            send(payload) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }
}
