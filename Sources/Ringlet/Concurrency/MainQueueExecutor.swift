#if canImport(_Concurrency)
import _Concurrency

/// The main executor: `@MainActor` jobs (and, in Embedded Swift, the main task's) are
/// `.job` nodes of the main queue's FIFO, so they and `DispatchQueue.main` items run
/// in one order on the main thread, driven by `dispatchMain()` — or by an `async main`,
/// whose drain is the same loop (Architecture, "Async code runs on the same pool").
///
/// In full Swift it is also the toolchain's `MainExecutor` (the conformance is in
/// RingletExecutorFactory.swift, beside the factory that names it).
// @unchecked Sendable: no state of its own; the main queue synchronises itself.
final class MainQueueExecutor: SerialExecutor, @unchecked Sendable {
    static let shared = MainQueueExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        Self.enqueue(UnownedJob(job))
    }

    /// A node on the main queue's FIFO, at the job's priority (the main thread runs it
    /// whatever the priority; it orders nothing there but what is reported).
    static func enqueue(_ job: UnownedJob) {
        #if !hasFeature(Embedded) && compiler(>=6.3)
        // Before the runtime has started, an async main's jobs wait without starting it.
        if !MainJobsBeforeStart.shared.movedToMainQueue, MainJobsBeforeStart.shared.hold(job) { return }
        #endif
        push(job)
    }

    /// `enqueue` onto the main queue's FIFO, without looking at the jobs held before the
    /// runtime started (MainJobsBeforeStart).
    static func push(_ job: UnownedJob) {
        let address = JobRunner.address(of: job)
        let main = DispatchQueue.main
        let node = ThreadContext.withCurrent { context in
            JobNode.make(job: address, priority: JobNode.priority(forJobPriority: JobRunner.priority(of: job)),
                         executor: .main, context: context)
        }
        SleepRegistry.jobWillRun(address)
        main.push(node)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless called on the main thread.
    func checkIsolated() {
        if !ThreadContext.current.isMainThread {
            ringletMisuse("expected to run on the main thread (the main actor's executor, which Ringlet drains "
                + "in dispatchMain()), but the calling thread is another one")
        }
    }

    func isIsolatingCurrentContext() -> Bool? {
        ThreadContext.current.isMainThread
    }
}
#endif
