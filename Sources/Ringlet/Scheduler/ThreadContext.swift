import Synchronization

/// What Ringlet knows about the calling thread: the worker it is (if any), the queue
/// whose work it is running, and the QoS it runs at. Kept in a C thread-local
/// pointer (Embedded Swift has no thread-local storage of its own).
///
/// Workers create theirs at start; other threads (main, foreign) get one lazily,
/// released by a pthread key destructor when the thread exits.
///
/// The properties its own thread alone reads and writes on the item path are
/// `@exclusivity(unchecked)`: nothing else can overlap their accesses, and the runtime's
/// dynamic check costs a call into the Swift runtime per access on every wake-up's path.
final class ThreadContext {
    /// The pool thread this is, or nil for the main thread and foreign threads.
    let worker: Worker?
    let isMainThread: Bool
    /// The manager thread, which never yields to a backlog of work (WorkNodePool).
    let isManager: Bool
    /// The queue whose item (or sync block) this thread is running; its target
    /// chain is what the thread holds. Set and restored around every item without
    /// reference counting: whoever runs the item keeps the queue alive meanwhile.
    /// Stored in an atomic word (relaxed: a plain load or store) so that the stall
    /// watch may read another thread's value; it then looks the address up in
    /// `QueueRegistry` before touching the queue.
    var currentQueueReference: Unmanaged<DispatchQueue>? {
        @inline(__always) get {
            let bits = currentQueueWord.load(ordering: .relaxed)
            return UnsafeRawPointer(bitPattern: bits).map { Unmanaged<DispatchQueue>.fromOpaque($0) }
        }
        @inline(__always) set {
            currentQueueWord.store(newValue.map { UInt(bitPattern: $0.toOpaque()) } ?? 0, ordering: .relaxed)
        }
    }
    private let currentQueueWord = Atomic<UInt>(0)
    /// The address of the queue this thread runs work of (0: none), for other threads.
    var currentQueueAddress: UInt { currentQueueWord.load(ordering: .relaxed) }
    /// Items (and sync blocks) this thread has started; written by the thread only.
    /// The stall watch compares it across ticks to tell a long-running item.
    let itemsStarted = Atomic<UInt>(0)

    /// Queues this thread still holds below the current one: each `sync` that ran on
    /// this thread from inside another queue's item pushes that queue here (GCD's
    /// thread frames). Empty outside nested syncs, so plain items never touch it.
    @exclusivity(unchecked) var outerQueues: [Unmanaged<DispatchQueue>] = []

    /// The queues this thread is draining, outermost first: a queue's drain runs
    /// nested inside its serial target's. A nested drain stops when any queue below
    /// it is suspended (`outerDrainStopped`), as it would had the target been drained
    /// item by item. Unretained: each drainer keeps its queue alive.
    @exclusivity(unchecked) var drainingQueues: [Unmanaged<DispatchQueue>] = []
    /// Targets whose release waits for an outer queue's deinit to end
    /// (`DispatchQueue.releaseTarget`); nil while no deinit on this thread releases one.
    var targetsToRelease: [DispatchQueue]?
    /// Spins of this worker, at a serial queue run dry, that ended with no push since
    /// the last one that paid off (see `DispatchQueue.waitBrieflyForPushLocked`).
    @exclusivity(unchecked) var fruitlessSpins = 0

    /// True when a queue this thread drains beneath the innermost one was suspended:
    /// the innermost drain must stop at its next item boundary.
    var outerDrainStopped: Bool {
        // No queue anywhere is suspended: nothing to look for.
        if DispatchQueue.queuesStopping.load(ordering: .acquiring) == 0 { return false }
        var index = drainingQueues.count - 2
        while index >= 0 {
            if drainingQueues[index]._withUnsafeGuaranteedRef({ $0.stopRequested.load(ordering: .acquiring) }) {
                return true
            }
            index -= 1
        }
        return false
    }

    /// Calls `body` with every queue this thread holds: the current one, the ones
    /// nested syncs left below it, and all of their targets, innermost first. (A queue
    /// the thread drains is held only while its items run, and then it is current or
    /// a target of the current one: `NodeRunner` leaves an item's queue only after what
    /// the item released is gone.)
    func forEachHeldQueue(_ body: (DispatchQueue) -> Bool) {
        var starts: [DispatchQueue] = []
        if let current = currentQueue { starts.append(current) }
        for outer in outerQueues.reversed() { starts.append(outer.takeUnretainedValue()) }
        for start in starts {
            var queue: DispatchQueue? = start
            while let holding = queue {
                if !body(holding) { return }
                queue = holding.currentTarget
            }
        }
    }

    /// The queue this thread holds exclusively (so that nothing else of it can run
    /// until the thread lets go) that `queue` runs on: `queue` itself or a queue up its
    /// target chain; nil when there is none. A serial queue is held exclusively by
    /// the thread running its work; a concurrent one only while its barrier runs.
    func exclusivelyHeldQueue(onChainOf queue: DispatchQueue, asBarrier barrier: Bool = false) -> DispatchQueue? {
        var found: DispatchQueue?
        forEachHeldQueue { holding in
            var needed: DispatchQueue? = queue
            var first = true
            while let candidate = needed, !candidate.isRoot {
                if candidate === holding && (candidate.isSerial || (first && barrier)
                                             || candidate.lock.withLock { candidate.state.barrierRunning }) {
                    found = holding
                    return false
                }
                first = false
                needed = candidate.currentTarget
            }
            return true
        }
        return found
    }

    /// "thread 'ringlet-w1'", "the main thread", "thread 4711": for messages.
    var threadDescription: String {
        if let worker { return "thread '\(worker.name)'" }
        if isMainThread { return "the main thread" }
        let id = ThreadControl.threadID
        return ThreadControl.threadName(id).map { "thread '\($0)' (\(id))" } ?? "thread \(id)"
    }

    /// The queue whose item this thread runs (retained for the caller).
    var currentQueue: DispatchQueue? { currentQueueReference?.takeUnretainedValue() }
    /// The QoS of the item this thread runs, what `async` propagates. For threads
    /// outside the pool: userInteractive on the main thread (as on Darwin),
    /// unspecified elsewhere. In an atomic byte (relaxed: a plain load or store) so
    /// that the live dump may read another thread's value.
    var currentPriority: QoSPriority {
        @inline(__always) get { QoSPriority(packed: priorityWord.load(ordering: .relaxed)) }
        @inline(__always) set { priorityWord.store(newValue.rawValue, ordering: .relaxed) }
    }
    private let priorityWord = Atomic<UInt8>(0)
    /// The wait this thread is blocked in, for the deadlock report.
    var blockedOn: WaitReason?
    /// The breadcrumb of the item this thread runs (0: none), for the dump and the
    /// reports to read from other threads (relaxed: a plain store per item).
    let runningCrumb = Atomic<UInt64>(0)
    /// The breadcrumb what this thread submits now carries (`Breadcrumb`): one hop
    /// from the running item, or the thread's own when it runs none. Own thread only.
    var submitCrumb: UInt64
    /// The thread's own crumb: an activity begun at the thread, for what it submits
    /// outside any item.
    let threadCrumb: UInt64
    /// Items this thread submitted and ran, per QoS (for `Runtime.statistics`).
    let counters = ItemCounters()
    /// Free work nodes this thread keeps (see `WorkNodePool`), linked through `next`.
    @exclusivity(unchecked) var nodeCache: WorkNodeRef?
    @exclusivity(unchecked) var nodeCacheCount = 0
    /// The thread defers the wakes its pushes choose (`Scheduler.beginWakeBatch`), and
    /// those it deferred. Its own thread only.
    @exclusivity(unchecked) var batchingWakes = false
    @exclusivity(unchecked) var batchedWakes: [Worker] = []
    /// This thread's trace ring, nil with tracing off (`TraceRecorder`): the one load
    /// and branch every traced point of the item path pays when nobody traces.
    let trace: TraceBuffer?

    /// `lane` names the thread in a trace when it is neither a worker nor the main thread.
    init(worker: Worker?, lane: String? = nil, isManager: Bool = false) {
        self.worker = worker
        self.isManager = isManager
        isMainThread = worker == nil && ThreadControl.threadID == ThreadControl.processID
        trace = Self.traceBuffer(worker: worker, isMainThread: isMainThread, lane: lane)
        threadCrumb = Breadcrumb.forThread(id: ThreadControl.threadID)
        submitCrumb = threadCrumb
        priorityWord.store(isMainThread ? QoSPriority(.userInteractive).rawValue : QoSPriority(.unspecified).rawValue,
                           ordering: .relaxed)
    }

    /// The calling thread's context, created on first use.
    static var current: ThreadContext {
        @inline(__always) get {
            if let raw = ThreadControl.contextPointer {
                return Unmanaged<ThreadContext>.fromOpaque(raw).takeUnretainedValue()
            }
            return install(ThreadContext(worker: nil))
        }
    }

    /// Calls `body` with the calling thread's context without retaining it (the
    /// thread-local slot keeps it alive): the allocation-free path for `async`.
    @inline(__always)
    static func withCurrent<R>(_ body: (ThreadContext) -> R) -> R {
        if let raw = ThreadControl.contextPointer {
            return Unmanaged<ThreadContext>.fromOpaque(raw)._withUnsafeGuaranteedRef(body)
        }
        return body(install(ThreadContext(worker: nil)))
    }

    /// The calling thread's context if it has one (never allocates).
    static var currentIfPresent: ThreadContext? {
        guard let raw = ThreadControl.contextPointer else { return nil }
        return Unmanaged<ThreadContext>.fromOpaque(raw).takeUnretainedValue()
    }

    @discardableResult
    static func install(_ context: ThreadContext) -> ThreadContext {
        ThreadControl.onThreadExit { raw in
            let context = Unmanaged<ThreadContext>.fromOpaque(raw!)
            // The thread is exiting: its cached nodes go back to the pool.
            let value = context.takeUnretainedValue()
            if value.nodeCacheCount > 0 { Runtime.shared.pool.giveBack(value) }
            CounterRegistry.shared.retire(value.counters)
            context.release()
        }
        ThreadControl.setContextPointer(Unmanaged.passRetained(context).toOpaque())
        CounterRegistry.shared.register(context.counters)
        return context
    }

    /// The QoS `async` captures from this thread: userInteractive becomes
    /// userInitiated (GCD's rule: UI work is the main thread's alone).
    var propagatedPriority: QoSPriority {
        currentPriority.level == .userInteractive ? QoSPriority(.userInitiated) : currentPriority
    }

    /// What `enter` replaced; give it back to `restore`.
    struct SavedState {
        let queue: Unmanaged<DispatchQueue>?
        let priority: QoSPriority
        let runningCrumb: UInt64
        let submitCrumb: UInt64
    }

    /// Marks the thread as running work of `queue` at `priority` (no retain: the
    /// caller keeps `queue` alive until `restore`), for an item that carries `crumb`:
    /// what it submits carries the next hop (`Breadcrumb.submitted(fromQueue:)`).
    @inline(__always)
    func enter(_ queue: Unmanaged<DispatchQueue>, at priority: QoSPriority, crumb: UInt64) -> SavedState {
        let saved = SavedState(queue: currentQueueReference, priority: currentPriority,
                               runningCrumb: runningCrumb.load(ordering: .relaxed), submitCrumb: submitCrumb)
        currentQueueReference = queue
        currentPriority = priority
        runningCrumb.store(crumb, ordering: .relaxed)
        if crumb & Importance.boostBit != 0 { Importance.retain() }
        submitCrumb = Breadcrumb(raw: crumb == 0 ? threadCrumb : crumb)
            .submitted(fromQueue: queue._withUnsafeGuaranteedRef { $0.number })
        itemsStarted.store(itemsStarted.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        return saved
    }

    @inline(__always)
    func restore(_ saved: SavedState) {
        if runningCrumb.load(ordering: .relaxed) & Importance.boostBit != 0 { Importance.release() }
        currentQueueReference = saved.queue
        currentPriority = saved.priority
        runningCrumb.store(saved.runningCrumb, ordering: .relaxed)
        submitCrumb = saved.submitCrumb
    }
}
