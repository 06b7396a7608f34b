// Main-actor jobs that reach Ringlet's main executor before the runtime has started.
// Compiled where the executors are installed at load (full Swift 6.3 or later).

#if !hasFeature(Embedded) && compiler(>=6.3)
import _Concurrency
import Synchronization

/// With Ringlet's executors installed at load (ringlet_executors.c), an `async main`'s
/// first job reaches the main executor before any line of the program has run. Making
/// it a main-queue node would start the runtime there, with the profile first use finds,
/// and threads in a program that may never use Ringlet. So main-actor jobs wait here,
/// in order, until the runtime starts:
///
/// - the main executor's `run()` (the end of an async main's first slice) runs them on
///   the main thread itself, one after another, while the runtime has not started — so
///   the first line of an async main may still call `Runtime.start(configuration:)`;
/// - once the runtime has started, what is left moves to the main queue's FIFO, in
///   order, before anything submitted after the start can reach it: when the runtime's
///   parts are first published (every submission needs them) or an explicit start
///   returns (`Runtime.moveHeldMainJobs`), and at the main thread's next drain; from then
///   on main-actor jobs go straight there (one relaxed load on their path).
///
/// A main-actor job held while the runtime never starts stays held: nothing could drain
/// it anyway, as the main queue's drains start the runtime.
// @unchecked Sendable: `held` and `runtimeStarted` under `lock`.
final class MainJobsBeforeStart: @unchecked Sendable {
    static let shared = MainJobsBeforeStart()

    /// Held jobs have moved to the main queue: jobs go straight there.
    private let moved = Atomic<Bool>(false)
    /// A job reached Ringlet's executors before the runtime started.
    private let jobSeen = Atomic<Bool>(false)
    /// The runtime has started (`runtimeDidStart`).
    private let started = Atomic<Bool>(false)
    private let lock = FutexLock()
    /// Posted when a job is held or the runtime starts.
    private let changed = FutexEvent()
    private var held: [UnownedJob] = []
    private var runtimeStarted = false

    /// Whether main-actor jobs go straight to the main queue.
    @inline(__always)
    var movedToMainQueue: Bool { moved.load(ordering: .acquiring) }

    /// Whether any job reached Ringlet's executors before the runtime started (the
    /// `swiftConcurrency` key can then no longer hand them back).
    var sawJobBeforeStart: Bool { jobSeen.load(ordering: .acquiring) }

    /// A job for the default executor arrived: noted when the runtime has not started.
    @inline(__always)
    func noteJob() {
        if !started.load(ordering: .relaxed) { jobSeen.store(true, ordering: .releasing) }
    }

    /// Holds `job` unless the held jobs have moved; true when held.
    func hold(_ job: UnownedJob) -> Bool {
        jobSeen.store(true, ordering: .releasing)
        lock.lock()
        if moved.load(ordering: .relaxed) {
            lock.unlock()
            return false
        }
        held.append(job)
        lock.unlock()
        changed.post()
        return true
    }

    /// The runtime has started (`Runtime.start` or first use), any thread: a main
    /// thread running held jobs goes on to drain the main queue.
    func runtimeDidStart() {
        started.store(true, ordering: .releasing)
        lock.withLock { runtimeStarted = true }
        changed.post()
    }

    /// Once the runtime has started, any thread: moves the held jobs to the main queue in
    /// order, once (later calls cost one relaxed load).
    @inline(__always)
    func moveToMainQueue() {
        if moved.load(ordering: .relaxed) { return }
        moveSlowly()
    }

    @inline(never)
    private func moveSlowly() {
        // The parts first: their first publication moves the held jobs itself
        // (`Runtime.moveHeldMainJobs`), which must not happen inside this lock.
        _ = RuntimeParts.shared
        lock.lock()
        let jobs = held
        held = []
        // Pushed under the lock: a job enqueued meanwhile waits, then finds `moved` and
        // goes after these.
        for job in jobs { MainQueueExecutor.push(job) }
        moved.store(true, ordering: .releasing)
        lock.unlock()
    }

    /// The main executor's run loop before the runtime starts, main thread: runs held
    /// jobs here in order; returns true once the runtime has started, false when
    /// `condition` held first.
    func runUntilRuntimeStarts(_ condition: () -> Bool) -> Bool {
        let executor = MainQueueExecutor.shared.asUnownedSerialExecutor()
        while !condition() {
            let seen = changed.snapshot
            lock.lock()
            if runtimeStarted {
                lock.unlock()
                return true
            }
            let jobs = held
            held = []
            lock.unlock()
            if jobs.isEmpty {
                _ = changed.wait(ifUnchangedFrom: seen)
                continue
            }
            for job in jobs { job.runSynchronously(on: executor) }
        }
        return false
    }
}
#endif
