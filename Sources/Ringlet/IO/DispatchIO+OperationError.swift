
extension DispatchIO {
    /// Why an awaited read or write failed (DispatchIO+Async.swift): the errno the
    /// operation ended with, the descriptor, and the bytes it leaves — what the
    /// handler forms hand to their last call, as one error a task can throw on.
    ///
    /// Its description names the descriptor and the errno, as Ringlet's other
    /// DispatchIO messages do: `read of DispatchIO(fd 7) failed with EBADF (errno 9)`.
    public struct OperationError: Error, CustomStringConvertible, Sendable {
        /// The channel's descriptor (-1 for a path that could not be opened).
        public let fileDescriptor: Int32
        /// The errno: EBADF for a descriptor that is not open (or was closed and
        /// reused), ECANCELED for an operation a `.stop` close ended, EINVAL for a
        /// negative offset or length, and whatever read(2) or write(2) answered.
        public let errno: Errno
        /// Whether the operation was a write.
        public let isWrite: Bool
        /// A read: the bytes read before the error, in order. A write: the bytes it did
        /// not write (all of them when it never started).
        public let data: DispatchData
        /// Whether cancelling the awaiting task ended the operation (`errno` is then
        /// ECANCELED). Only Embedded Swift throws such an error: it has no `any Error`
        /// to throw `CancellationError` through; full Swift throws `CancellationError`.
        public let isTaskCancellation: Bool

        public init(fileDescriptor: Int32, errno: Errno, isWrite: Bool, data: DispatchData = .empty,
                    isTaskCancellation: Bool = false) {
            self.fileDescriptor = fileDescriptor
            self.errno = errno
            self.isWrite = isWrite
            self.data = data
            self.isTaskCancellation = isTaskCancellation
        }

        public var description: String {
            let cause = isTaskCancellation ? " (the awaiting task was cancelled)" : ""
            return "\(isWrite ? "write to" : "read of") DispatchIO(fd \(fileDescriptor)) failed with "
                + "\(errno.name) (errno \(errno.rawValue))\(cause)"
        }
    }
}
