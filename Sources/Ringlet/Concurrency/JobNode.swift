#if canImport(_Concurrency)
import _Concurrency
#endif

/// Swift concurrency's jobs as work nodes (Architecture, "Async code runs on the same
/// pool"): a task's next slice or an actor's turn takes one node from the fixed pool,
/// like an `async` item, and goes into the same strict-QoS run queues or queue FIFOs.
///
/// The node keeps the job's address in the word of its `object` field, written and
/// read as raw bits: a job is not an object Ringlet may retain (jobs other than tasks
/// are not reference counted), so the field must never be read as a reference. Every
/// path that takes a `.job` node clears the word (`takeJob`) before the node goes back
/// to the pool. `ticket` says on which executor the job runs (`Executor`).
///
/// Cost: one node from the pool (none of the job's own memory is used) and the same
/// push as an `async` item; no allocation.
enum JobNode {
    /// The executor a job node runs on: what `swift_job_run` is told.
    enum Executor: UInt32 {
        /// The default (global) executor: no isolation (the generic executor).
        case global = 0
        /// The queue that drains the node, as a `SerialExecutor` (an actor on a queue).
        case queueSerial = 1
        /// The queue that holds the node (its FIFO, or a global queue's run queue), as a
        /// `TaskExecutor` (`withTaskExecutorPreference`, `Task(executorPreference:)`).
        case queueTask = 2
        /// The main executor: `@MainActor` jobs, on the main queue's FIFO.
        case main = 3
    }

    /// The QoS a job of priority `raw` runs at: the class with the same raw value (the
    /// values are Darwin's `qos_class_t`, which `JobPriority` uses too); a value between
    /// two classes runs at the lower one; unspecified (0) runs at default, as an item
    /// without QoS does.
    static func priority(forJobPriority raw: UInt8) -> QoSPriority {
        let level: QoSLevel
        switch raw {
        case 0x21...: level = .userInteractive
        case 0x19...: level = .userInitiated
        case 0x15...: level = .default
        case 0x11...: level = .utility
        case 0x01...: level = .background
        default: level = .default
        }
        return QoSPriority(level: level, relativePriority: 0)
    }

    /// A node carrying the job at `address`, counted as submitted by the calling thread.
    /// Waits while the pool is full, as `async` does.
    @inline(__always)
    static func make(job address: UnsafeMutableRawPointer, priority: QoSPriority, executor: Executor,
                     context: ThreadContext) -> WorkNodeRef {
        let priority = Importance.admitted(priority, context: context, exempt: executor == .main)
        context.counters.countSubmitted(priority.level)
        context.counters.countJobSubmitted()
        context.traceEnqueued(queueNumber: 0, priority)
        let node = RuntimeParts.withPool { $0.allocate(kind: .job, priority: priority, context: context) }
        node.pointee.ticket = executor.rawValue
        WorkNode.objectWord(node).storeBytes(of: UInt(bitPattern: address), as: UInt.self)
        return node
    }

    /// Takes the job's address out of `node`, leaving the field empty (nil) so that
    /// the node can be released.
    @inline(__always)
    static func takeJob(_ node: WorkNodeRef) -> UnsafeMutableRawPointer {
        let word = WorkNode.objectWord(node)
        let bits = word.load(as: UInt.self)
        word.storeBytes(of: 0, as: UInt.self)
        return UnsafeMutableRawPointer(bitPattern: bits).unsafelyUnwrapped
    }

    /// Runs the job `node` carries on the executor its ticket names (NodeRunner's
    /// `.job` case). `queue` is the queue whose FIFO held it (nil: a root run queue,
    /// `root` then names the global queue it was sent to).
    static func run(_ node: WorkNodeRef, from queue: DispatchQueue?, root: UInt8, context: ThreadContext) {
        let priority = node.pointee.priority
        let executor = Executor(rawValue: node.pointee.ticket) ?? .global
        let job = takeJob(node)
        let crumb = node.pointee.crumb
        NodeRunner.release(node, context)
        let owner = NodeRunner.owner(queue, priority, root)
        // What the job submits says where it came from, as a work item's does.
        let saved = context.enter(owner, at: priority, crumb: crumb)
        context.traceStarted(.job, owner, priority)
        #if canImport(_Concurrency)
        JobRunner.run(job, on: executor, queue: owner)
        #else
        ringletBug("a Swift concurrency job reached a runtime built without _Concurrency")
        #endif
        context.traceFinished()
        context.restore(saved)
        context.counters.countRan(priority.level)
        context.counters.countJobRan()
    }
}

#if canImport(_Concurrency)
/// Hands a job to the Swift runtime to run on the calling thread.
enum JobRunner {
    /// The generic executor (no isolation): `swift_executor_generic()` of the
    /// toolchain's ExecutorImpl.h, two zero words, which `UnownedSerialExecutor`'s
    /// public initialisers cannot make.
    static let generic = unsafeBitCast((UInt(0), UInt(0)), to: UnownedSerialExecutor.self)

    static func run(_ job: UnsafeMutableRawPointer, on executor: JobNode.Executor, queue: Unmanaged<DispatchQueue>) {
        let unowned = unsafeBitCast(job, to: UnownedJob.self)
        switch executor {
        case .global:
            unowned.runSynchronously(on: generic)
        case .queueSerial:
            queue._withUnsafeGuaranteedRef { unowned.runSynchronously(on: $0.serialExecutorReference) }
        case .queueTask:
            #if hasFeature(Embedded)
            unowned.runSynchronously(on: generic)
            #else
            queue._withUnsafeGuaranteedRef { unowned.runSynchronously(on: $0.taskExecutorReference) }
            #endif
        case .main:
            unowned.runSynchronously(on: MainQueueExecutor.shared.asUnownedSerialExecutor())
        }
    }

    /// The job's priority byte (`JobPriority.rawValue`).
    @inline(__always)
    static func priority(of job: UnownedJob) -> UInt8 { job.priority.rawValue }

    @inline(__always)
    static func address(of job: UnownedJob) -> UnsafeMutableRawPointer {
        unsafeBitCast(job, to: UnsafeMutableRawPointer.self)
    }
}
#endif
