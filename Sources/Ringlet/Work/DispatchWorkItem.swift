import Synchronization

/// A closure with a QoS, flags, a completion to wait for and notifications;
/// source-compatible with `Dispatch.DispatchWorkItem`.
///
/// `wait()` and `notify` refer to the item's first run (by a queue or `perform()`);
/// an item cancelled before it runs still "runs" (returns at once), so waiters and
/// notifications are released. Waiting raises the queue holding the item to the
/// waiter's QoS (priority-inversion resolution, which semaphores cannot give).
public class DispatchWorkItem: @unchecked Sendable {
    let qos: DispatchQoS
    let flags: DispatchWorkItemFlags
    private let block: () -> Void
    /// The creator's QoS, used with `.assignCurrentContext`.
    let capturedPriority: QoSPriority
    private let cancelled = Atomic<Bool>(false)
    private let lock = FutexLock()
    private let finishedEvent = FutexEvent()
    // Under `lock`:
    private var finished = false
    private var notifications: [(queue: DispatchQueue, work: DispatchWorkItem)] = []
    private var enqueuedOn: DispatchQueue?

    /// Creates an item; nothing runs until it is submitted or performed.
    public init(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
                block: @escaping @Sendable () -> Void) {
        self.qos = qos
        self.flags = flags
        self.block = block
        capturedPriority = ThreadContext.current.propagatedPriority
    }

    deinit {
        lock.deallocate()
        finishedEvent.deallocate()
    }

    /// Runs the closure now on the calling thread (unless cancelled) and completes
    /// the item.
    public func perform() {
        if !isCancelled { block() }
        finish()
    }

    /// Run by a queue's drainer.
    func invokeFromQueue() {
        lock.withLock { enqueuedOn = nil }
        perform()
    }

    func willEnqueue(on queue: DispatchQueue, priority: QoSPriority) {
        lock.withLock { if !finished { enqueuedOn = queue } }
    }

    private func finish() {
        lock.lock()
        if finished {
            lock.unlock()
            return
        }
        finished = true
        let pending = notifications
        notifications = []
        lock.unlock()
        finishedEvent.post(wake: Int32.max)
        for (queue, work) in pending { queue.async(execute: work) }
    }

    /// Prevents the closure from running if it has not started; a running closure
    /// finishes. Waiters and notifications are released when the item is next run.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Waits until the item has run. A Ringlet wait: a reserve worker may cover a
    /// pool thread that waits here.
    public func wait() { _ = waitFor(timeoutNanoseconds: -1) }

    /// Waits until the item has run or `timeout` passes.
    public func wait(timeout: DispatchTime) -> DispatchTimeoutResult {
        waitFor(timeoutNanoseconds: timeout.relativeNanoseconds)
    }

    /// Waits until the item has run or the wall clock reaches `wallTimeout`.
    public func wait(wallTimeout: DispatchWallTime) -> DispatchTimeoutResult {
        waitFor(timeoutNanoseconds: wallTimeout.relativeNanoseconds)
    }

    private func waitFor(timeoutNanoseconds: Int64) -> DispatchTimeoutResult {
        let holder = lock.withLock { finished ? nil : enqueuedOn }
        holder?.raise(to: ThreadContext.current.currentPriority)
        let deadline = WaitDeadline(relativeNanoseconds: timeoutNanoseconds)
        return BlockingWait.perform(.workItem(self)) {
            while true {
                let seen = finishedEvent.snapshot
                if lock.withLock({ finished }) { return .success }
                guard let remaining = deadline.remaining else { return .timedOut }
                _ = BlockingWait.sleep(on: finishedEvent, seen: seen, timeoutNanoseconds: remaining)
            }
        }
    }

    /// Submits `execute` to `queue` once this item has run (at once if it has).
    public func notify(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
                       queue: DispatchQueue, execute: @escaping @Sendable () -> Void) {
        notify(queue: queue, execute: DispatchWorkItem(qos: qos, flags: flags, block: execute))
    }

    /// Submits the work item `execute` to `queue` once this item has run.
    public func notify(queue: DispatchQueue, execute: DispatchWorkItem) {
        lock.lock()
        if finished {
            lock.unlock()
            queue.async(execute: execute)
            return
        }
        notifications.append((queue, execute))
        lock.unlock()
    }
}
