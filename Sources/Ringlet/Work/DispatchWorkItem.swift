import Synchronization

/// A closure with a QoS, flags, a completion to wait for and notifications;
/// source-compatible with `Dispatch.DispatchWorkItem`.
///
/// `wait()` and `notify` refer to the item's first run (by a queue or `perform()`);
/// an item cancelled before it runs still "runs" (returns at once), so waiters and
/// notifications are released. Waiting raises the queue holding the item to the
/// waiter's QoS (priority-inversion resolution, which semaphores cannot give).
// @unchecked Sendable: mutable state under `lock`; `cancelled` is atomic.
public class DispatchWorkItem: @unchecked Sendable {
    let qos: DispatchQoS
    let flags: DispatchWorkItemFlags
    private let block: () -> Void
    /// The creator's QoS, used with `.assignCurrentContext`.
    let capturedPriority: QoSPriority
    /// The breadcrumb its submissions carry instead of the submitter's (0: none):
    /// the creator's with `.assignCurrentContext`, else the caller's of a `notify`
    /// that will submit it, so a notification continues the activity that asked for
    /// it, not the one that happened to finish last. Written before the item is
    /// handed to a queue or a notification list; atomic (relaxed) because a program
    /// may submit the same item from several threads while another calls `notify`.
    var capturedCrumb: UInt64 {
        get { capturedCrumbWord.load(ordering: .relaxed) }
        set { capturedCrumbWord.store(newValue, ordering: .relaxed) }
    }
    private let capturedCrumbWord = Atomic<UInt64>(0)
    private let cancelled = Atomic<Bool>(false)
    /// The context of the thread running the closure now (0: none), for `rejectSelfWait`.
    private let performer = Atomic<UInt>(0)
    private let lock = FutexLock()
    private let finishedEvent = FutexEvent()
    // Under `lock`:
    private var finished = false
    private var notifications: [(queue: DispatchQueue, work: DispatchWorkItem)] = []
    private var enqueuedOn: DispatchQueue?
    private var enqueuedPriority = QoSPriority.lowest
    /// Submissions so far, and the latest one that has started (a submission may be
    /// queued twice when a waiter raises it, and runs once).
    private var tickets: UInt32 = 0
    private var startedTicket: UInt32 = 0

    /// Creates an item; nothing runs until it is submitted or performed.
    public init(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
                block: @escaping @Sendable () -> Void) {
        self.qos = qos
        self.flags = flags
        self.block = block
        let context = ThreadContext.current
        capturedPriority = context.propagatedPriority
        if flags.contains(.assignCurrentContext) { capturedCrumbWord.store(context.submitCrumb, ordering: .relaxed) }
    }

    deinit {
        lock.deallocate()
        finishedEvent.deallocate()
    }

    /// Runs the closure now on the calling thread (unless cancelled) and completes
    /// the item.
    public func perform() {
        if !isCancelled {
            // The thread running the closure is noted, so that a wait on the item from
            // inside it is caught (`rejectSelfWait`): one word, the first performer's.
            let me = UInt(bitPattern: ThreadContext.withCurrent { Unmanaged.passUnretained($0).toOpaque() })
            let noted = performer.compareExchange(expected: 0, desired: me, ordering: .relaxed).exchanged
            block()
            if noted { performer.store(0, ordering: .relaxed) }
        }
        finish()
    }

    /// Run by a queue's drainer for submission `ticket`. Returns false (and runs
    /// nothing) when a raised copy of that submission already ran it.
    func invokeFromQueue(ticket: UInt32) -> Bool {
        let first = lock.withLock { () -> Bool in
            if ticket != 0 && startedTicket >= ticket { return false }
            startedTicket = max(startedTicket, ticket)
            enqueuedOn = nil
            return true
        }
        if first { perform() }
        return first
    }

    /// Records a submission; returns its ticket.
    func willEnqueue(on queue: DispatchQueue, priority: QoSPriority) -> UInt32 {
        lock.withLock {
            tickets &+= 1
            if !finished {
                enqueuedOn = queue
                enqueuedPriority = priority
            }
            return tickets
        }
    }

    /// A waiter at `priority` raises what it waits for: the queue holding the item,
    /// or — on a global queue, which has no order to keep — a copy of the item's node
    /// in the more urgent run queue (whichever is taken first runs the item).
    private func raiseForWaiter(at priority: QoSPriority) {
        let (holder, queuedAt, ticket) = lock.withLock { (finished ? nil : enqueuedOn, enqueuedPriority, tickets) }
        guard let holder, priority > queuedAt else { return }
        guard holder.isRoot else {
            holder.raise(to: priority)
            return
        }
        lock.withLock { enqueuedPriority = priority }
        let node = RuntimeParts.withPool { $0.allocate(kind: .workItem, priority: priority, object: self) }
        node.pointee.ticket = ticket
        holder.push(node)
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
        if timeoutNanoseconds < 0 { rejectSelfWait() }
        raiseForWaiter(at: ThreadContext.current.currentPriority)
        let deadline = WaitDeadline(relativeNanoseconds: timeoutNanoseconds)
        return BlockingWait.perform(.workItem(self), timed: timeoutNanoseconds >= 0) {
            while true {
                let seen = finishedEvent.snapshot
                if lock.withLock({ finished }) { return .success }
                guard let remaining = deadline.remaining else { return .timedOut }
                _ = BlockingWait.sleep(on: finishedEvent, seen: seen, timeoutNanoseconds: remaining)
            }
        }
    }

    /// Traps when only the waiting thread could end the wait: it runs this item's own
    /// closure, or the item's one submission waits on a queue the thread holds.
    private func rejectSelfWait() {
        let context = ThreadContext.current
        let (done, holder, submissions) = lock.withLock { (finished, enqueuedOn, tickets) }
        if done { return }
        if performer.load(ordering: .relaxed) == UInt(bitPattern: Unmanaged.passUnretained(context).toOpaque()) {
            ringletMisuse("self-wait: DispatchWorkItem.wait() from inside that item's own closure on "
                + "\(context.threadDescription): the item finishes only when its closure returns, so this wait never "
                + "ends. Use notify(queue:execute:) for what must follow the item, or wait from another thread.")
        }
        guard let holder, !holder.isRoot, submissions == 1,
              let held = context.exclusivelyHeldQueue(onChainOf: holder) else { return }
        let through = held === holder ? "" : " (which runs on '\(held.label)')"
        ringletMisuse("self-wait: DispatchWorkItem.wait() on \(context.threadDescription) for an item queued on "
            + "queue '\(holder.label)'\(through), which this thread holds: the item cannot start until this "
            + "thread's work returns, so this wait never ends. Use notify(queue:execute:), or submit the item to "
            + "another queue.")
    }

    /// Submits `execute` to `queue` once this item has run (at once if it has).
    public func notify(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
                       queue: DispatchQueue, execute: @escaping @Sendable () -> Void) {
        // GCD runs the block at the QoS of the thread that called notify.
        notify(queue: queue, execute: DispatchWorkItem(qos: qos, flags: flags.union(.assignCurrentContext),
                                                       block: execute))
    }

    /// Submits the work item `execute` to `queue` once this item has run.
    public func notify(queue: DispatchQueue, execute: DispatchWorkItem) {
        if execute.capturedCrumb == 0 { execute.capturedCrumb = ThreadContext.current.submitCrumb }
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
