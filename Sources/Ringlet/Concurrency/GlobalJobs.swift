#if canImport(_Concurrency)
import _Concurrency

/// The default (global) executor's one operation: a job becomes a `.job` node in the
/// scheduler's run queue of its QoS — the same strict-QoS queues `async` items use —
/// and wakes a worker of a band that may run it (Scheduler.enqueue). Full Swift reaches
/// it through `PoolExecutor` (RingletExecutorFactory.swift), Embedded Swift through
/// `swift_task_enqueueGlobalImpl` (EmbeddedExecutorHooks.swift).
enum GlobalJobs {
    @inline(__always)
    static func enqueue(_ job: UnownedJob) {
        let address = JobRunner.address(of: job)
        let priority = JobNode.priority(forJobPriority: JobRunner.priority(of: job))
        let node = ThreadContext.withCurrent { context in
            JobNode.make(job: address, priority: priority, executor: .global, context: context)
        }
        SleepRegistry.jobWillRun(address)
        RuntimeParts.withScheduler { $0.enqueue(node) }
    }
}
#endif
