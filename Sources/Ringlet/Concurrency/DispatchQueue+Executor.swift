#if canImport(_Concurrency)
import _Concurrency

// Queues as executors, as Apple's Dispatch offers them and Linux's lacks: a serial queue
// can be an actor's executor (`SerialExecutor`), any queue a task's preferred executor
// (`TaskExecutor`, full Swift). A job enqueued on a queue is a `.job` node in the
// queue's FIFO (a global queue's: in its run queue), drained like an `async` item, at
// the QoS the queue gives an item of the job's priority (`resolvePriority`).

/// A serial queue as an actor's executor:
///
///     actor Sensor {
///         let queue = DispatchQueue(label: "sensor")
///         nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
///     }
///
/// The actor's jobs then run on `queue`, in order with its `async` items, and
/// `sensor.assumeIsolated { }` works inside `queue.async { }` work. A concurrent queue
/// is never a serial executor: `asUnownedSerialExecutor()` traps on one.
extension DispatchQueue: SerialExecutor {
    /// Enqueues a job (the Swift runtime calls this): one node from the work-node pool,
    /// pushed like an `async` item. Waits while the pool is full.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueueJob(UnownedJob(job))
    }

    /// This queue as an actor's executor, compared with other queues through
    /// `isSameExclusiveExecutionContext(other:)`. Traps on a concurrent or global
    /// queue, naming it: its items run in parallel, so it cannot isolate an actor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        if !isSerial {
            ringletMisuse("queue '\(label)' is concurrent and cannot be an actor's executor (SerialExecutor): its "
                + "items run in parallel. Use a serial queue (which may target this one), or make it a task "
                + "executor with withTaskExecutorPreference")
        }
        return serialExecutorReference
    }

    /// True when both queues run their work under the same serial queue (the last
    /// serial queue of their target chains), so that work of one never runs beside
    /// work of the other: two serial queues that target one serial queue share it.
    public func isSameExclusiveExecutionContext(other: DispatchQueue) -> Bool {
        guard let mine = exclusionRoot, let theirs = other.exclusionRoot else { return false }
        return mine === theirs
    }

    /// Traps, naming the queue, unless the calling thread runs work of this queue (or
    /// of the serial queue that serialises it): what `assumeIsolated` and
    /// `preconditionIsolated` ask when the Swift runtime cannot tell by itself.
    public func checkIsolated() {
        if !holdsExclusion {
            ringletMisuse("expected to run on queue '\(label)' (checkIsolated: an actor on this queue was assumed "
                + "isolated), but the calling thread runs no work of it; call from work submitted to the queue")
        }
    }

    /// Whether the calling thread runs work of this queue (its item, a `sync` onto it,
    /// a drain of it or of the serial queue that serialises it).
    public func isIsolatingCurrentContext() -> Bool? {
        holdsExclusion
    }

    // MARK: Internals

    /// The reference the runtime keeps: complex equality, so that it asks
    /// `isSameExclusiveExecutionContext` when two queues' identities differ.
    var serialExecutorReference: UnownedSerialExecutor {
        UnownedSerialExecutor(complexEquality: self)
    }

    /// The last serial queue of the target chain starting here (nil: none, a concurrent
    /// queue straight on a global queue): the queue that makes this one exclusive.
    var exclusionRoot: DispatchQueue? {
        var last: DispatchQueue?
        var cursor: DispatchQueue? = self
        while let queue = cursor, !queue.isRoot {
            if queue.isSerial { last = queue }
            cursor = queue.currentTarget
        }
        return last
    }

    /// The calling thread holds this queue, or the serial queue that serialises it.
    var holdsExclusion: Bool {
        guard let context = ThreadContext.currentIfPresent else { return false }
        let root = isSerial ? exclusionRoot : nil
        var held = false
        context.forEachHeldQueue { queue in
            if queue === self || (root != nil && queue === root) { held = true }
            return !held
        }
        if held { return true }
        for draining in context.drainingQueues {
            let queue = draining.takeUnretainedValue()
            if queue === self || (root != nil && queue === root) { return true }
        }
        return false
    }

    /// A job for this queue: a node in its FIFO (a global queue's run queue, the main
    /// thread's FIFO for the main queue), run isolated to the queue when it is serial,
    /// or on `executor` when given (EmbeddedJobs).
    func enqueueJob(_ job: UnownedJob, runningOn executor: JobNode.Executor? = nil) {
        let address = JobRunner.address(of: job)
        let node = ThreadContext.withCurrent { context in
            let priority = resolvePriority(for: JobNode.priority(forJobPriority: JobRunner.priority(of: job)),
                                           flags: [], itemQoS: .unspecified)
            return JobNode.make(job: address, priority: priority,
                                executor: executor ?? (isSerial ? .queueSerial : .queueTask), context: context)
        }
        SleepRegistry.jobWillRun(address)
        push(node)
    }
}

#if !hasFeature(Embedded)
/// Any queue as a task's preferred executor: the task's jobs run on the queue (in
/// parallel on a concurrent one), at the QoS the queue gives them.
///
///     await withTaskExecutorPreference(DispatchQueue(label: "io", attributes: .concurrent)) { ... }
extension DispatchQueue: TaskExecutor {
    var taskExecutorReference: UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
#endif
#endif
