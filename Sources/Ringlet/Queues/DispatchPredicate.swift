/// A condition about the queue the caller runs on, checked by
/// `dispatchPrecondition(condition:)`.
public enum DispatchPredicate: Sendable {
    /// The caller runs on this queue (or on a queue that targets it).
    case onQueue(DispatchQueue)
    /// The caller runs on this queue and has it exclusively (serial, or a barrier).
    case onQueueAsBarrier(DispatchQueue)
    /// The caller does not run on this queue.
    case notOnQueue(DispatchQueue)

    func holds(in context: ThreadContext) -> Bool {
        switch self {
        case .onQueue(let queue): return Self.isOn(queue, context: context, exclusively: false)
        case .onQueueAsBarrier(let queue): return Self.isOn(queue, context: context, exclusively: true)
        case .notOnQueue(let queue): return !Self.isOn(queue, context: context, exclusively: false)
        }
    }

    private static func isOn(_ queue: DispatchQueue, context: ThreadContext, exclusively: Bool) -> Bool {
        if queue.isMain { return context.isMainThread }
        var found = false
        context.forEachHeldQueue { holding in
            if holding === queue {
                found = !exclusively || queue.isSerial || queue.lock.withLock { queue.state.barrierRunning }
                return false
            }
            return true
        }
        return found
    }
}

/// Checks that the caller runs (or does not run) on a queue; traps otherwise, with
/// the queue labels, file and line. Checked in every build, as Ringlet's checks are
/// cheap (a walk of the caller's target chain).
public func dispatchPrecondition(condition: @autoclosure () -> DispatchPredicate,
                                 file: StaticString = #file, line: UInt = #line) {
    let predicate = condition()
    let context = ThreadContext.current
    if predicate.holds(in: context) { return }
    let actual = context.currentQueue.map { "'\($0.label)'" }
        ?? (context.isMainThread ? "the main thread outside any queue" : "a thread outside any queue")
    let expectation: String
    switch predicate {
    case .onQueue(let queue): expectation = "expected to run on queue '\(queue.label)'"
    case .onQueueAsBarrier(let queue): expectation = "expected to run on queue '\(queue.label)' as a barrier"
    case .notOnQueue(let queue): expectation = "expected not to run on queue '\(queue.label)'"
    }
    ringletMisuse("dispatchPrecondition failed at \(file):\(line): \(expectation), but running on \(actual)")
}
