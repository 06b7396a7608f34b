#if canImport(_Concurrency)
import _Concurrency

extension DispatchIO {
    /// The bytes of a read as they come, for `for try await`: each element is one
    /// piece the ring delivered, in order; the sequence finishes at the end of the file
    /// (a pipe's writer closed it) or after `length` bytes, and throws the errno as
    /// ``OperationError`` naming the fd, after the bytes read before it.
    ///
    /// It pulls: each step is one read operation of at most `ioChunkBytes` (and at most
    /// the channel's high water), issued when the task asks for the next element — on a
    /// pipe or socket it ends with the bytes there once some arrived, as
    /// `read(fromFileDescriptor:)` does. Nothing is read ahead, so a slow consumer holds
    /// no buffers and leaves unread bytes in the pipe (backpressure on the writer).
    /// Cancelling the task cancels the read under way: the step throws
    /// `CancellationError` once that read is over, and the sequence is finished.
    ///
    /// `offset` is ignored by `.stream` channels (they go on from the descriptor's
    /// position, or the pipe). In Embedded Swift, which cannot conform a throwing
    /// iterator to `AsyncIteratorProtocol` without `any Error`, call
    /// `makeAsyncIterator()` and `next()` directly.
    public func chunks(offset: Int = 0, length: Int = Int.max) -> Chunks {
        Chunks(channel: self, offset: offset, length: length)
    }

    /// The pieces of a read, in order (``DispatchIO/chunks(offset:length:)``).
    public struct Chunks: Sendable {
        let channel: DispatchIO
        let offset: Int
        let length: Int

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(channel: channel, offset: offset, remaining: Swift.max(length, 0),
                          invalid: offset < 0 || length < 0)
        }

        /// Reads the next piece when asked; nil once the read is complete.
        public struct AsyncIterator {
            let channel: DispatchIO
            var offset: Int
            var remaining: Int
            /// A negative offset or length: the first step fails with EINVAL (as a read does).
            var invalid: Bool
            var finished = false
            /// An errno after the last bytes: thrown by the next step.
            var deferred: AwaitedOperation.Outcome?

            /// The next piece: at least one byte, nil at the end. Throws the errno (after
            /// handing over the bytes read before it) or, for a cancelled task,
            /// `CancellationError`; after a throw or the end, nil.
            public mutating func next() async throws(AsyncFailure) -> DispatchData? {
                if finished { return nil }
                if let failed = deferred {
                    finished = true
                    throw channel.failure(failed, isWrite: false)
                }
                if remaining == 0 && !invalid {
                    finished = true
                    return nil
                }
                let step = channel.stepLength(remaining)
                let queue = DispatchIO.queueForTask()
                let (channel, at, asked) = (channel, invalid ? -1 : offset, invalid ? 0 : step)
                let outcome = await AwaitedOperation.run { handler in
                    channel.read(offset: at, length: asked, queue: queue, endsWhenDrained: true, handler: handler)
                }
                let piece = outcome.data
                if outcome.error != 0 {
                    if piece.count == 0 {
                        finished = true
                        throw channel.failure(outcome, isWrite: false)
                    }
                    var rest = outcome
                    rest.data = .empty
                    deferred = rest  // the bytes first (even when cancelled), the error next time
                } else if piece.count == 0 || channel.isRegularFile && piece.count < step {
                    finished = true  // the end (a file's short read is its end)
                }
                if piece.count == 0 { return nil }
                offset += piece.count
                remaining -= Swift.min(piece.count, remaining)
                return piece
            }
        }
    }

    /// The length of one step of `chunks`: at most a request, the high water and what is left.
    func stepLength(_ remaining: Int) -> Int {
        Swift.min(remaining, engine.chunkBytes, highWaterSetting)
    }
}

#if !hasFeature(Embedded)
extension DispatchIO.Chunks: AsyncSequence {}
extension DispatchIO.Chunks.AsyncIterator: AsyncIteratorProtocol {}
#endif
#endif
