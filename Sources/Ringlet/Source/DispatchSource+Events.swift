#if canImport(_Concurrency)
import _Concurrency
import Synchronization

extension DispatchSourceProtocol {
    /// Traps, naming the misuse: only Ringlet's `DispatchSource` has events to iterate
    /// (the requirement's witness for a conforming type of the program's own). Emitted
    /// into the program, so that Ringlet's Embedded object holds no unspecialized
    /// trap for it (DispatchSourceProtocols.swift).
    @_alwaysEmitIntoClient
    public var events: DispatchSource.Events { _eventsOfAForeignSource() }
}

/// The trap of `DispatchSourceProtocol.events` for a type that is not Ringlet's.
@usableFromInline
func _eventsOfAForeignSource() -> Never {
    ringletMisuse("events of a DispatchSourceProtocol value that is not a Ringlet DispatchSource: make the "
        + "source with DispatchSource.make...")
}

extension DispatchSource {
    /// The source's events for `for await`, in place of the event handler: each
    /// element is the `data` a handler would see — a timer's fires (missed intervals
    /// included), a signal's count, the sum, OR or latest user data, a read or write
    /// source's byte estimate, process or file-system event bits.
    ///
    /// Making the iterator takes the source's events over: from then on its deliveries
    /// go to the iterator, not to the event handler, and it activates the source if it
    /// is inactive. Events that come while the task is not waiting merge into one
    /// element as a busy handler's `data` does (Architecture, "Sources"): the iterator
    /// holds at most one element, whatever the rate. Read and write sources stay
    /// level-triggered, the next element coming once the task asks again and the
    /// descriptor is still ready, as the handler runs again after it returns.
    ///
    /// The sequence ends once the source is cancelled and its cancel handler has run (a
    /// suspended source must be resumed for that, as in GCD). Cancelling the iterating
    /// task cancels the source, and so does dropping the iterator (a `break` out of the
    /// loop): the source's life is the loop's. Cost: one small object per iteration and
    /// a continuation per element; no thread, no buffer.
    ///
    /// Traps, naming the source, when a second iterator is made while the first one's
    /// source is not cancelled, and when two tasks wait on one iterator at once.
    public var events: Events { Events(source: self) }

    /// A source's events, as ``DispatchSource/events`` describes.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = UInt
        public typealias Failure = Never

        let source: DispatchSource

        /// Takes the source's events over and activates it (see `events`).
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(source: source, stream: source.attachEventStream(), ending: Ending(source: source))
        }

        /// Waits for the next element; nil once the source is cancelled and done.
        public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
            public typealias Element = UInt
            public typealias Failure = Never

            let source: DispatchSource
            let stream: SourceEventStream
            /// Shared by the iterator's copies; the last one gone cancels the source.
            let ending: Ending

            /// The next element: what is pending at once, else the next delivery's value;
            /// nil once the source is cancelled and its cancel handler has run. Cancelling
            /// the task cancels the source (then nil).
            public mutating func next() async -> UInt? {
                source.eventsConsumed(stream)
                let (source, stream) = (source, stream)
                return await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<UInt?, Never>) in
                        stream.wait(continuation, cancelled: source.isCancelled, source: source)
                    }
                } onCancel: {
                    source.cancel()
                }
            }
        }

        /// Cancels the source when the last copy of its iterator goes away.
        // @unchecked Sendable: immutable; `cancel()` may be called from any thread.
        final class Ending: @unchecked Sendable {
            let source: DispatchSource
            init(source: DispatchSource) { self.source = source }
            deinit { source.cancel() }
        }
    }

    /// Sends the deliveries to a new event stream from now on and activates the
    /// source; traps, naming the source, if an earlier stream is still live.
    func attachEventStream() -> SourceEventStream {
        let stream = SourceEventStream(kind: kind)
        let earlier = lock.withLock { () -> Bool in
            if eventStream != nil && !isCancelled { return true }
            eventStream = stream
            return false
        }
        if earlier {
            ringletMisuse("\(name) already has an events iterator: iterate a source's events once (a loop that "
                + "ends cancels the source)")
        }
        if finished.load(ordering: .acquiring) {
            stream.end()  // finished already: no delivery and no `finish` will come
        }
        activate()
        return stream
    }

    /// The task asks for the next element: what a handler's return does for read and
    /// write sources, which are level-triggered (`recheckReadiness`).
    /// An estimate held since is stale (taken before the task read or wrote): dropped,
    /// and readiness checked now, which queues a fresh delivery while the fd is ready.
    func eventsConsumed(_ stream: SourceEventStream) {
        switch kind {
        case .read, .write:
            stream.dropPending()
            readinessAfterHandler()
        default: break
        }
    }
}
#endif
