/// Counts per QoS class, indexed by class.
public struct QoSCounts: Sendable, Equatable {
    public var background = 0
    public var utility = 0
    public var `default` = 0
    public var userInitiated = 0
    public var userInteractive = 0

    init(_ byLevel: [Int]) {
        background = byLevel[QoSLevel.background.rawValue]
        utility = byLevel[QoSLevel.utility.rawValue]
        `default` = byLevel[QoSLevel.default.rawValue] + byLevel[QoSLevel.unspecified.rawValue]
        userInitiated = byLevel[QoSLevel.userInitiated.rawValue]
        userInteractive = byLevel[QoSLevel.userInteractive.rawValue]
    }

    public subscript(qosClass: DispatchQoS.QoSClass) -> Int {
        switch qosClass {
        case .background: return background
        case .utility: return utility
        case .default, .unspecified: return `default`
        case .userInitiated: return userInitiated
        case .userInteractive: return userInteractive
        }
    }

    public var total: Int { background + utility + `default` + userInitiated + userInteractive }
}

/// A snapshot of the runtime's pool: threads, pending work and memory records.
public struct RuntimeStatistics: Sendable {
    /// Workers created at start (never changes).
    public let workers: Int
    /// Reserve workers created at start (never changes).
    public let reserve: Int
    /// The manager thread (io_uring or epoll, timers): always 1.
    public let managerThreads: Int
    /// I/O helper threads created at start: those of the epoll backend (regular
    /// files' blocking reads and writes), 0 on io_uring. Never changes.
    public let ioThreads: Int
    /// The kernel interface the manager runs on (`Runtime.backend` says why).
    public let backend: KernelBackend
    /// Timers (`asyncAfter`) armed in the manager now.
    public let timersArmed: Int
    /// Times the manager woke (timer windows reached, requests from other threads).
    public let managerWakeups: Int
    /// Reserve workers currently allowed to run (covering blocked workers).
    public let reserveInUse: Int
    /// Pool threads inside a Ringlet wait (not counting those blocked in the kernel:
    /// `workersBlockedInKernel`).
    public let blockedThreads: Int
    /// Pool threads parked with nothing to do.
    public let parkedThreads: Int
    /// Nodes waiting in the root run queues, per QoS (plain items and queue wake-ups).
    public let runnablePerQoS: QoSCounts
    /// Items submitted (`async`, work items) and not yet finished — waiting in any
    /// queue or running — per the QoS they run at.
    public let pendingPerQoS: QoSCounts
    /// Items run since start, per the QoS they ran at (Swift concurrency jobs included).
    public let itemsRunPerQoS: QoSCounts
    /// Swift concurrency jobs (task slices, actor turns) run since start by Ringlet's
    /// executors; also counted in `itemsRunPerQoS`.
    public let jobsRun: Int
    /// Swift concurrency jobs enqueued on Ringlet's executors and not yet run (waiting
    /// in a queue or a run queue, or sleeping in the timer structure); also counted in
    /// `pendingPerQoS`.
    public let jobsPending: Int
    /// Whether Ringlet is the executor of Swift concurrency in this process (the
    /// `swiftConcurrency` key, and a toolchain with the executor hooks; see
    /// `Runtime.runsSwiftConcurrency`).
    public let swiftConcurrencyOnRinglet: Bool
    /// Work nodes in use now: pending items in every queue, wake-ups, contended syncs.
    public let workNodesInUse: Int
    /// The most work nodes ever in use at once: the peak of pending work (items,
    /// wake-ups, contended syncs; nodes cached by threads included).
    public let workNodesPeak: Int
    /// The work-node pool's capacity (configuration key `workNodes`).
    public let workNodeCapacity: Int
    /// Times a submitter had to wait because the pool was full.
    public let workNodeExhaustionWaits: Int
    /// Times a thread taking work nodes yielded the processor because more than 16,384
    /// were out: a backlog past the caches, whose producers give the cores to the
    /// threads that run it (the Measuring article, "A backlog slows its producers").
    public let workNodeBacklogYields: Int
    /// Threads of the whole process now (/proc/self/task), -1 when unreadable.
    public let processThreads: Int
    /// Context switches of the runtime's threads (workers, reserve, manager, I/O helpers) since
    /// they started — their wake-ups and preemptions — or -1 when /proc is
    /// unreadable. An idle runtime adds none.
    public let poolContextSwitches: Int
    /// The stall watch is looking: work waited for a thread, or every pool thread
    /// is blocked. It looks every quarter of `deadlockGraceMilliseconds` until
    /// neither holds, so after a burst that kept every worker busy the manager
    /// wakes once more (up to that long later) before the runtime is idle.
    public let stallWatchArmed: Bool
    /// Workers the stall watch found blocked in the kernel on their item (a syscall, a
    /// sleep) while work waited, covered by the reserve until they come back.
    public let workersBlockedInKernel: Int
    /// How many times since start a worker was so covered.
    public let workersCoveredInKernel: Int
    /// How many times since start a worker that ran a serial queue dry spun for up to
    /// `spinMicroseconds` waiting for another push, rather than let go of the queue.
    public let drainSpins: Int
    /// How many times since start the main thread, having run the main queue dry,
    /// watched up to ten `spinMicroseconds` for the next item before parking (it does
    /// while the items come back to back).
    public let mainThreadWatches: Int
    /// Of those watches, the ones an item ended before the main thread parked.
    public let mainThreadWatchesCaught: Int
    /// Times since start the main queue held work for `mainQueueGraceMilliseconds`
    /// with nothing draining it, each reported on stderr (Reliability).
    public let mainQueueStallReports: Int
    /// Workers the manager woke from inside its own wait since start: the wake went to
    /// the kernel in the io_uring_enter in which the manager went to sleep
    /// (IORING_OP_FUTEX_WAKE, Linux 6.7+), so a worker woken on the manager's CPU did
    /// not preempt it first. 0 on older kernels and on the epoll backend, where each
    /// wake is a futex(2) call.
    public let workerWakesInManagerWait: Int
    /// Fires of `.strict` timers (leeway under 300 µs) handed to a worker ahead of
    /// their deadline since start; the worker slept out the rest, so the handler
    /// started one wake-up after the deadline instead of two (Architecture,
    /// "Energy-efficient timers").
    public let strictTimerFiresStaged: Int
    /// Of those, the fires whose worker took them only after the deadline: the
    /// hand-off took longer than the 300 µs advance (a loaded or preempted machine).
    public let strictTimerFiresReachedLate: Int
    /// Trace events every thread has recorded since start, kept or since overwritten
    /// (0 with tracing off: no thread has a ring; Observing, "The trace timeline").
    public let traceEventsRecorded: Int
    /// Times a memory-pressure source saw `.critical` and the runtime gave memory back,
    /// and the bytes it gave back in all (the pages of free work nodes and of the I/O
    /// buffers kept for reuse; `DispatchSource.makeMemoryPressureSource`). The pools keep
    /// their capacity.
    public let memoryPressureTrims: Int
    public let memoryTrimmedBytes: Int
    /// Timer sources armed now in the tables their bands' workers keep (Architecture,
    /// "Timers kept by their band"); `timersArmed` counts the manager's own.
    public let timersKeptByBands: Int
    /// Timer windows fired for those bands since start, by one of their workers or by
    /// the manager (`bandWindowsFiredByManager`: while the band had no free worker, or
    /// at its once-a-second look).
    public let bandWindowsFired: Int
    public let bandWindowsFiredByManager: Int
    /// Wakes of parked workers that a worker firing its band's window took on itself
    /// instead, running those handlers on the thread already awake.
    public let wakesTakenByFiringWorker: Int
    /// Events of read and write sources taken from their band's epoll set since start
    /// (Architecture, "Descriptors watched by their band"): by a worker of the band,
    /// which then ran the handler itself, and by the manager in its stead (while the band
    /// had no free worker, or at its once-a-second look).
    public let descriptorEventsTakenByBands: Int
    public let descriptorEventsTakenByManager: Int
    /// Socket requests on the ring now and at most at once since start (accepts,
    /// connects, receives, sends, shutdowns, and their polls after EAGAIN: the Net
    /// layer), and connections that went away before an accept took them (skipped).
    public let socketRequestsInFlight: Int
    public let socketRequestsPeak: Int
    public let acceptsSkipped: Int
    /// The receive buffers of continuous receives (`RingSocket.receiveContinuously`),
    /// how many the program holds now (delivered data not yet released), and how often a
    /// receive waited for one to come back.
    public let socketReceiveBuffers: Int
    public let socketReceiveBuffersHeld: Int
    public let socketReceiveBufferWaits: Int
    /// Whether the kernel picks those buffers itself (a provided-buffer ring: io_uring on
    /// Linux 5.19 and later) rather than the engine, one receive at a time.
    public let socketReceiveBuffersProvided: Bool
    /// The class the process's work is clamped to (a background service), nil when none;
    /// items the clamp lowered; boosts begun (one per urgent request a service took);
    /// and the references that keep the process boosted now — a boosted item waiting or
    /// running, a reply not yet sent (0: not boosted). The Services article.
    public let importanceClamp: DispatchQoS.QoSClass?
    public let itemsClamped: Int
    public let boostsBegun: Int
    public let boostReferences: Int

    /// Every thread the runtime created: workers, reserve, the manager and the I/O helpers.
    public var runtimeThreads: Int { workers + reserve + managerThreads + ioThreads }

    /// Bytes the runtime reserved for its own records at start (nodes and stacks).
    public var reservedBytes: Int {
        workNodeCapacity * MemoryLayout<WorkNode>.stride
    }
}
