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

#if hasFeature(Embedded) && canImport(_Concurrency)
import _Concurrency

@_silgen_name("swift_task_enqueueGlobalImpl")
func ringletEnqueueGlobal(_ job: UnownedJob) {
    GlobalJobs.enqueue(job)
}

/// Nothing in Embedded Swift 6.3.1 schedules delayed jobs (it has no `Task.sleep`);
/// the hook runs a delayed job in a timer window all the same.
@_silgen_name("swift_task_enqueueGlobalWithDelayImpl")
func ringletEnqueueGlobalWithDelay(_ delay: UInt64, _ job: UnownedJob) {
    SleepWindow.schedule(job, delay: delay, tolerance: nil, target: nil)
}

@_silgen_name("swift_task_enqueueGlobalWithDeadlineImpl")
func ringletEnqueueGlobalWithDeadline(_ seconds: Int64, _ nanoseconds: Int64, _ toleranceSeconds: Int64,
                                      _ toleranceNanoseconds: Int64, _ clock: Int32, _ job: UnownedJob) {
    let deadline = UInt64(max(seconds, 0)) &* 1_000_000_000 &+ UInt64(max(nanoseconds, 0))
    let now = MonotonicClock.nanoseconds
    let tolerance: UInt64? = toleranceNanoseconds < 0
        ? nil : UInt64(max(toleranceSeconds, 0)) &* 1_000_000_000 &+ UInt64(toleranceNanoseconds)
    SleepWindow.schedule(job, delay: deadline > now ? deadline - now : 0, tolerance: tolerance, target: nil)
}

@_silgen_name("swift_task_enqueueMainExecutorImpl")
func ringletEnqueueMain(_ job: UnownedJob) {
    MainQueueExecutor.enqueue(job)
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
