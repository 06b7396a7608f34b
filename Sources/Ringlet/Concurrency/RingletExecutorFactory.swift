// Ringlet as Swift concurrency's default and main executor, through the toolchain's
// executor hooks: `_createExecutors(factory:)`, `ExecutorFactory`, `MainExecutor`,
// `RunLoopExecutor` (SPI ExperimentalCustomExecutors) and `SchedulingExecutor` (SPI
// ExperimentalScheduling), as Swift 6.3 ships them. Compiled only where they exist
// (full Swift 6.3 or later); elsewhere `ConcurrencyExecutors.install` installs nothing
// and async code stays on the toolchain's executor (Architecture, "Async code runs on the
// same pool").

#if !hasFeature(Embedded) && compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

/// The default executor: jobs into the pool's strict-QoS run queues (`GlobalJobs`),
/// delayed jobs (`Task.sleep`) into the manager's timer windows (`SleepWindow`).
// @unchecked Sendable: no state of its own.
final class PoolExecutor: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    static let shared = PoolExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        MainJobsBeforeStart.shared.noteJob()
        GlobalJobs.enqueue(UnownedJob(job))
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?,
                           clock: C) {
        SleepWindow.schedule(UnownedJob(job), delay: Self.nanoseconds(delay, clock),
                             tolerance: tolerance.map { Self.nanoseconds($0, clock) }, target: nil)
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?,
                           clock: C) {
        let delay = clock.now.duration(to: instant)
        SleepWindow.schedule(UnownedJob(job), delay: Self.nanoseconds(delay, clock),
                             tolerance: tolerance.map { Self.nanoseconds($0, clock) }, target: nil)
    }

    /// A clock's duration in nanoseconds, rounded up (a sleep never ends early); 0 for
    /// a negative one (an instant already passed). The standard clocks measure in
    /// `Swift.Duration`; another clock's durations cannot be read and trap, naming it.
    static func nanoseconds<C: Clock>(_ duration: C.Duration, _ clock: C) -> UInt64 {
        guard let duration = duration as? Swift.Duration else {
            ringletMisuse("a job was scheduled on clock \(C.self), whose durations are not Swift.Duration; Ringlet's "
                + "executor schedules on ContinuousClock and SuspendingClock (and clocks measured in Duration)")
        }
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let whole = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let fraction = UInt64(attoseconds / 1_000_000_000) + (attoseconds % 1_000_000_000 > 0 ? 1 : 0)
        if whole.overflow { return UInt64.max / 2 }
        return min(whole.partialValue &+ fraction, UInt64.max / 2)
    }
}

/// The main executor's run loop: the main thread draining the main queue, as
/// `dispatchMain()` does. `swift_task_asyncMainDrainQueue` (the end of an `async
/// main`'s first slice) calls `run()`.
extension MainQueueExecutor: MainExecutor {
    func run() throws {
        requireMainThread("run()")
        // An async main's first slice, and the jobs after it, run here until something
        // starts the runtime (MainJobsBeforeStart): a program that never uses Ringlet
        // starts no thread.
        guard MainJobsBeforeStart.shared.runUntilRuntimeStarts({ false }) else { return }
        MainThread.shared.drain(until: { false })
    }

    func runUntil(_ condition: () -> Bool) throws {
        requireMainThread("runUntil(_:)")
        guard MainJobsBeforeStart.shared.runUntilRuntimeStarts(condition) else { return }
        MainThread.shared.drain(until: condition)
    }

    func stop() {
        MainThread.shared.stop()
    }

    private func requireMainThread(_ call: String) {
        if !ThreadContext.current.isMainThread {
            ringletMisuse("the main executor's \(call) was called from a thread that is not the main thread; "
                + "the main actor's jobs run on the main thread, in dispatchMain() or an async main")
        }
    }
}

/// What `_createExecutors` installs.
struct RingletExecutorFactory: ExecutorFactory {
    static var mainExecutor: any MainExecutor { MainQueueExecutor.shared }
    static var defaultExecutor: any TaskExecutor { PoolExecutor.shared }
}

/// The load-time install (ringlet_executors.c calls it from a constructor, before
/// main, unless the program keeps the toolchain's executors).
@_cdecl("ringlet_install_executors_at_load")
func ringletInstallExecutorsAtLoad() {
    _createExecutors(factory: RingletExecutorFactory.self)
}

extension ConcurrencyExecutors {
    static var hooksAvailable: Bool { true }

    /// Gives Swift concurrency back to the toolchain's executors, before any job reached
    /// Ringlet's (the `swiftConcurrency` key says false).
    static func restoreToolchainExecutors() {
        _createExecutors(factory: PlatformExecutorFactory.self)
    }

    static func installHooks() {
        _createExecutors(factory: RingletExecutorFactory.self)
    }

    /// Whether the calling thread is inside a task (the toolchain's executor is then
    /// already running tasks).
    static var insideTask: Bool { withUnsafeCurrentTask { $0 != nil } }
}
#endif
