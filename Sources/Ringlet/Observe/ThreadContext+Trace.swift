// The trace points of the item path (Observing, "The trace timeline"). Each is one
// load of the context's `trace` and a branch not taken while tracing is off; with
// tracing on, one event in the thread's own ring (TraceBuffer.swift).

extension ThreadContext {
    /// An item of `queue` at `priority` was queued by this thread (0: a Swift
    /// concurrency job, whose queue is known only when it runs).
    @inline(__always)
    func traceEnqueued(queueNumber: UInt32, _ priority: QoSPriority) {
        guard let trace else { return }
        trace.record(.enqueued, priority: priority.rawValue, subject: UInt64(queueNumber))
    }

    /// This thread begins to run an item of `queue`; `traceFinished` ends it.
    @inline(__always)
    func traceStarted(_ kind: TraceItemKind, _ queue: Unmanaged<DispatchQueue>, _ priority: QoSPriority) {
        guard let trace else { return }
        trace.record(.started, priority: priority.rawValue, aux: kind.rawValue,
                     subject: UInt64(queue._withUnsafeGuaranteedRef { $0.number }))
    }

    @inline(__always)
    func traceFinished() {
        guard let trace else { return }
        trace.record(.finished)
    }
}
