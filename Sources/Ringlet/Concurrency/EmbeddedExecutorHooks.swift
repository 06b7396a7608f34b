// Embedded Swift: the executor entry points that the toolchain's `libswift_Concurrency.a`
// leaves to the program (declared in the toolchain's usr/include/swift/ExecutorImpl.h;
// the toolchain's own `libswift_ConcurrencyDefaultExecutor.a` is single-threaded).
// Ringlet provides them, so `Task`, `async let`, task groups and actors of an Embedded
// program run on Ringlet's pool under strict QoS, and `@main ... async` drains the
// main queue like `dispatchMain()`. A program that links them must not link the
// default executor library too (duplicate symbols). Link: libswift_Concurrency.a,
// libstdc++ and --gc-sections (the Makefile's `embedded` target).
//
// Compiled only in Embedded mode for a target that has the Concurrency library
// (Swift 6.3.1 ships it for x86_64-unknown-linux-gnu only, not for aarch64 boards).
//
// That library is built single-threaded: the running task and its executor are
// process-wide variables (ActiveTask and ExecutorTrackingInfo are in .bss, not
// thread-local), so two jobs running at once on two threads corrupt each other (a
// crash in swift_task_create_common within a few hundred tasks). Every job — the
// global executor's, the main task's, a delayed one — therefore runs on one serial
// queue (`EmbeddedJobs`): one at a time, at the job's QoS, on whichever pool thread
// drains that queue, never beside another job. Dispatch work still runs in parallel.
// An actor on a queue (a custom serial executor) is not usable there either: the
// library traps when a task hops to one.

#if hasFeature(Embedded) && canImport(_Concurrency)
import _Concurrency
import Synchronization

/// The one queue every Swift concurrency job runs on in Embedded Swift (see above).
///
/// An `async main`'s first slice runs on the main thread, outside the queue: the queue
/// is held (suspended) from the first job that slice enqueues until the slice ends
/// (`swift_task_asyncMainDrainQueueImpl`), so that no job runs beside it.
///
/// Only the process's first enqueue can come from that slice: it runs before any job.
/// Later, "the main thread is inside a task" proves nothing — the running task is a
/// process-wide variable, so the main thread also sees the task a pool thread is
/// running (say, one that just signalled the main thread and is finishing), and
/// holding the queue then would hold it for ever.
enum EmbeddedJobs {
    static let queue = DispatchQueue(label: "ringlet.swift-concurrency")
    /// 0: nothing enqueued yet; 1: the queue is held for the first slice; 2: the slice
    /// ended, or the first enqueue was not the slice's.
    private static let mainSlice = Atomic<Int>(0)

    static func enqueue(_ job: UnownedJob, runningOn executor: JobNode.Executor) {
        if mainSlice.load(ordering: .relaxed) == 0 {
            let firstSlice = ThreadContext.current.isMainThread && withUnsafeCurrentTask(body: { $0 != nil })
            if mainSlice.compareExchange(expected: 0, desired: firstSlice ? 1 : 2,
                                         ordering: .acquiringAndReleasing).exchanged, firstSlice {
                queue.suspend()
            }
        }
        queue.enqueueJob(job, runningOn: executor)
    }

    /// The first slice ended: jobs may run.
    static func mainSliceEnded() {
        if mainSlice.exchange(2, ordering: .acquiringAndReleasing) == 1 { queue.resume() }
    }
}

@_silgen_name("swift_task_enqueueGlobalImpl")
func ringletEnqueueGlobal(_ job: UnownedJob) {
    EmbeddedJobs.enqueue(job, runningOn: .global)
}

/// Nothing in Embedded Swift 6.3.1 schedules delayed jobs (it has no `Task.sleep`);
/// the hook runs a delayed job in a timer window all the same.
@_silgen_name("swift_task_enqueueGlobalWithDelayImpl")
func ringletEnqueueGlobalWithDelay(_ delay: UInt64, _ job: UnownedJob) {
    SleepWindow.schedule(job, delay: delay, tolerance: nil, target: EmbeddedJobs.queue)
}

@_silgen_name("swift_task_enqueueGlobalWithDeadlineImpl")
func ringletEnqueueGlobalWithDeadline(_ seconds: Int64, _ nanoseconds: Int64, _ toleranceSeconds: Int64,
                                      _ toleranceNanoseconds: Int64, _ clock: Int32, _ job: UnownedJob) {
    let deadline = UInt64(max(seconds, 0)) &* 1_000_000_000 &+ UInt64(max(nanoseconds, 0))
    let now = MonotonicClock.nanoseconds
    let tolerance: UInt64? = toleranceNanoseconds < 0
        ? nil : UInt64(max(toleranceSeconds, 0)) &* 1_000_000_000 &+ UInt64(toleranceNanoseconds)
    SleepWindow.schedule(job, delay: deadline > now ? deadline - now : 0, tolerance: tolerance,
                         target: EmbeddedJobs.queue)
}

@_silgen_name("swift_task_enqueueMainExecutorImpl")
func ringletEnqueueMain(_ job: UnownedJob) {
    // On the jobs' serial queue, not the main thread: never beside another job.
    EmbeddedJobs.enqueue(job, runningOn: .main)
}

@_silgen_name("swift_task_getMainExecutorImpl")
func ringletMainExecutor() -> UnownedSerialExecutor {
    MainQueueExecutor.shared.asUnownedSerialExecutor()
}

@_silgen_name("swift_task_isMainExecutorImpl")
func ringletIsMainExecutor(_ executor: UnownedSerialExecutor) -> Bool {
    unsafeBitCast(executor, to: (UInt, UInt).self).0
        == unsafeBitCast(MainQueueExecutor.shared.asUnownedSerialExecutor(), to: (UInt, UInt).self).0
}

/// The Concurrency library asks this only for executors that are not the current one
/// by identity; Ringlet's queues answer from the queues the thread is running.
@_silgen_name("swift_task_checkIsolatedImpl")
func ringletCheckIsolated(_ executor: UnownedSerialExecutor) {
    if let serial = executor.asSerialExecutor() {
        serial.checkIsolated()
    } else {
        ringletMisuse("checkIsolated: the executor asked about is not one Ringlet can check")
    }
}

@_silgen_name("swift_task_isIsolatingCurrentContextImpl")
func ringletIsIsolatingCurrentContext(_ executor: UnownedSerialExecutor) -> Int8 {
    guard let serial = executor.asSerialExecutor(), let isolated = serial.isIsolatingCurrentContext() else {
        return -1
    }
    return isolated ? 1 : 0
}

/// The end of an `async main`'s first slice: the main thread drains the main queue
/// (the main task's later slices included) for ever, as `dispatchMain()` does.
@_silgen_name("swift_task_asyncMainDrainQueueImpl")
func ringletAsyncMainDrainQueue() -> Never {
    EmbeddedJobs.mainSliceEnded()
    dispatchMain()
}

/// Thread donation (a synchronous wait for async work) would block a pool thread on
/// work only the pool can run; Ringlet does not offer it.
@_silgen_name("swift_task_donateThreadToGlobalExecutorUntilImpl")
func ringletDonateThread(_ condition: @convention(c) (UnsafeMutableRawPointer?) -> Bool,
                         _ context: UnsafeMutableRawPointer?) {
    ringletMisuse("a thread was to be donated to the global executor until a condition holds; Ringlet's fixed "
        + "pool runs async work on its own threads: await the work instead of waiting for it synchronously")
}
#endif
