#if canImport(_Concurrency)
import _Concurrency
import Synchronization

/// `Task.sleep` as a window in the manager's coalescing timers (Architecture, "The
/// path of a timer"): no thread and no timer source per sleep. The toolchain's sleep
/// hands its executor a small wake-up job due at the deadline; Ringlet takes that job's
/// node now, on the sleeping task's thread (where waiting for a full pool is allowed),
/// and asks the manager to push it when the window [deadline, deadline + leeway] is
/// reached, like an `asyncAfter` item. The leeway is half the sleep's tolerance (widened
/// for utility and background work by the board's policy), or, with none given, of GCD's
/// `asyncAfter` rule for the sleeping task's QoS; the other half is for resuming the
/// window's sleepers. Sleeps never end early.
///
/// Cancellation: the toolchain resumes a cancelled sleeper at once, with
/// `CancellationError`, by enqueueing it. Ringlet notices that enqueue (`jobWillRun`,
/// on every executor of its own, at the cost of one relaxed load while no sleep is
/// pending), removes the window from the timer structure and runs the wake-up job
/// straight away (it finds the sleep cancelled and only frees its state). A sleeper
/// resumed through another executor (a default actor's own queue) keeps its window
/// until it is reached; its wake-up job then does nothing. So does a sleeper cancelled
/// in the instant between arming its window and suspending: the toolchain resumes a
/// continuation not yet awaited without any enqueue, and the task goes on in the same
/// job, unseen. (Looking at the task when that job returns cannot tell this case from
/// a cancellation arriving just after the task suspended, whose handler may not have
/// marked the sleep cancelled yet: running the wake-up job then would end a cancelled
/// sleep early and without CancellationError. The toolchain's own executor keeps every
/// cancelled sleep's wake-up until its deadline.)
///
///   armed --(1) window reached--> released (wake-up job pushed)
///   armed --(2) sleeper enqueued, cancelled--> removed, released at once
///
///   (1) SleepWindow.reached, on the manager thread   (2) SleepRegistry.jobWillRun
// @unchecked Sendable: `handle` is read and written on the manager thread only; the rest is immutable.
final class SleepWindow: ManagerTimerTarget, @unchecked Sendable {
    let node: WorkNodeRef
    let target: DispatchQueue?
    /// The sleeping task's address (0: the sleep was not called from a task).
    let sleeper: UInt
    /// The timer, once armed. Manager thread only.
    var handle: TimerQueue.Handle?

    init(node: WorkNodeRef, target: DispatchQueue?, sleeper: UInt) {
        self.node = node
        self.target = target
        self.sleeper = sleeper
    }

    /// Schedules `job` (the toolchain's wake-up job) to run `delay` nanoseconds from now
    /// on the default executor (`target` nil) or on a queue used as an executor.
    static func schedule(_ job: UnownedJob, delay: UInt64, tolerance: UInt64?, target: DispatchQueue?) {
        let sleeper = withUnsafeCurrentTask { task -> (address: UInt, priority: UInt8)? in
            guard let task else { return nil }
            return (unsafeBitCast(task, to: UInt.self), task.priority.rawValue)
        }
        var priority = JobNode.priority(forJobPriority: sleeper?.priority ?? JobRunner.priority(of: job))
        if let target { priority = target.resolvePriority(for: priority, flags: [], itemQoS: .unspecified) }
        #if hasFeature(Embedded)
        let executor: JobNode.Executor = .global  // on EmbeddedJobs' queue (EmbeddedExecutorHooks.swift)
        #else
        let executor: JobNode.Executor = target == nil ? .global : (target!.isSerial ? .queueSerial : .queueTask)
        #endif
        let node = ThreadContext.withCurrent { context in
            context.trace?.record(.sleepArmed, priority: priority.rawValue, value: delay)
            return JobNode.make(job: JobRunner.address(of: job), priority: priority, executor: executor,
                                context: context)
        }
        let window = SleepWindow(node: node, target: target, sleeper: sleeper?.address ?? 0)
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        // The window is half the tolerance: a sleep ends when its task resumes, and the
        // other half is for resuming the window's sleepers, a thousand at once in a
        // task group (the task-sleep row of `make bench`: with the whole tolerance as
        // the window, the median sleep ended past it).
        let leeway = (tolerance.map {
            manager.leewayPolicy.leeway(requested: $0, period: delay, level: priority.level, strict: false)
        } ?? manager.leewayForAfter(delay: delay, level: priority.level)) / 2
        let deadline = MonotonicClock.nanoseconds &+ delay
        // Armed before it is registered, so that a cancellation found through the
        // registry always reaches the manager after the window was armed.
        manager.submit(.arm(window, deadline: deadline, leeway: leeway),
                       neededBy: TimerQueue.aim(deadline: deadline, leeway: leeway))
        if window.sleeper != 0 { SleepRegistry.shared.insert(window) }
    }

    override func armed(_ handle: TimerQueue.Handle) { self.handle = handle }

    /// Manager thread: the window is reached; the wake-up job goes to its executor.
    override func reached() {
        handle = nil
        RuntimeParts.shared.manager._withUnsafeGuaranteedRef { $0.trace?.record(.sleepReached) }
        if sleeper != 0 { SleepRegistry.shared.remove(self) }
        release()
    }

    /// Manager thread: the sleeper was cancelled; removes the window if it is still
    /// armed and runs the wake-up job now.
    func cancel(on manager: ManagerThread) {
        guard let handle, manager.disarmTimer(handle) else { return }
        self.handle = nil
        release()
    }

    private func release() {
        if let target { target.push(node) } else { RuntimeParts.withScheduler { $0.enqueue(node) } }
    }
}

/// The sleeping tasks with an armed window, by task address.
// @unchecked Sendable: `windows` under `lock`; `pending` is atomic.
final class SleepRegistry: @unchecked Sendable {
    static let shared = SleepRegistry()
    private let lock = FutexLock()
    private var windows: [UInt: SleepWindow] = [:]
    /// `windows.count`, readable without the lock: the enqueue paths' fast check.
    private let pending = Atomic<Int>(0)

    func insert(_ window: SleepWindow) {
        lock.withLock {
            windows[window.sleeper] = window
            pending.store(windows.count, ordering: .relaxed)
        }
    }

    func remove(_ window: SleepWindow) {
        lock.withLock {
            if windows[window.sleeper] === window { windows[window.sleeper] = nil }
            pending.store(windows.count, ordering: .relaxed)
        }
    }

    /// Every Ringlet executor calls this for each job it is handed. A sleeping task
    /// enqueued while cancelled was woken by its cancellation: its window goes.
    @inline(__always)
    static func jobWillRun(_ job: UnsafeMutableRawPointer) {
        if shared.pending.load(ordering: .relaxed) == 0 { return }
        shared.cancelWindow(of: job)
    }

    @inline(never)
    private func cancelWindow(of job: UnsafeMutableRawPointer) {
        // Only a task (job kind 0, the low byte of the job's flags word: ExecutorImpl.h's
        // SwiftJob) can be a sleeper; any other job is not looked at further.
        let flags = job.load(fromByteOffset: 4 * MemoryLayout<UnsafeRawPointer>.size, as: UInt32.self)
        if flags & 0xFF != 0 { return }
        let key = UInt(bitPattern: job)
        let window: SleepWindow? = lock.withLock {
            guard let found = windows[key], unsafeBitCast(key, to: UnsafeCurrentTask.self).isCancelled else {
                return nil
            }
            windows[key] = nil
            pending.store(windows.count, ordering: .relaxed)
            return found
        }
        guard let window else { return }
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        manager.submit(.run { [unowned(unsafe) manager] _ in window.cancel(on: manager) })
    }
}
#endif
