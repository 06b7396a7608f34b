
/// The process's Ringlet runtime: the fixed worker pool, the work-node pool and the
/// root queues. It starts once — explicitly with `Runtime.start(profile:)` or
/// `Runtime.start(configuration:)`, or on first use of any queue with the board
/// profile `BoardSelection` chooses (RINGLET_BOARD, detection, generic) — and lives
/// until the process exits.
///
/// Starting creates every pool thread the runtime will ever have
/// (`configuration.poolThreads`); nothing creates threads afterwards.
// @unchecked Sendable: immutable after start; its parts synchronise themselves.
public final class Runtime: @unchecked Sendable {
    /// The configuration in force.
    public let configuration: RuntimeConfiguration
    /// The board profile it started from (nil: started from a bare configuration).
    public let profile: BoardProfile?
    /// Where worker bands are pinned (nil: nowhere — equal capacities, no profile, or
    /// a profile naming CPUs this machine lacks).
    public let placement: CorePlacement?
    let scheduler: Scheduler
    /// Whether Ringlet is Swift concurrency's executor in this process: tasks, actors,
    /// `async let`, task groups and `Task.sleep` run on this pool and its timers, and
    /// `@MainActor` jobs in the main queue's FIFO. Set at start from the
    /// `swiftConcurrency` key, where the toolchain has the executor hooks (Swift 6.3 or
    /// later; always in Embedded Swift with a Concurrency library), and false when the
    /// runtime started inside a task on a thread it did not create (it then says so).
    public internal(set) var runsSwiftConcurrency = false
    /// The thread that owns the ring (io_uring or epoll) and the timers.
    let manager: ManagerThread
    var pool: WorkNodePool { scheduler.pool }

    /// The kernel interface the manager runs on, and why: io_uring, or epoll when it
    /// was asked for (the `backend` key, RINGLET_BACKEND) or io_uring was refused
    /// (Architecture, "The epoll backend"). Fixed at start.
    public var backend: BackendSelection { manager.backend.unsafelyUnwrapped }

    private init(configuration: RuntimeConfiguration, profile: BoardProfile?,
                 backend: BackendRequest) throws(RuntimeError) {
        self.configuration = configuration
        self.profile = profile
        placement = CorePlacement.forMachine(profile?.placement, board: profile?.board ?? "",
                                             onlineCPUs: ThreadControl.onlineCPUs)
        scheduler = try Scheduler(configuration: configuration, placement: placement) { node, context in
            NodeRunner.run(node, from: nil, context: context)
        }
        manager = ManagerThread(configuration: configuration, backendRequest: backend, scheduler: scheduler)
    }

    /// Starts the runtime with `configuration`. Call it before any queue is used;
    /// afterwards it throws `.alreadyStarted`. Throws `.invalidConfiguration` naming
    /// the key when a value is out of range, `.threadCreationFailed` when the system
    /// refuses a thread, `.ioUringUnavailable` (with cause and fix) when io_uring is
    /// refused and the configuration's `backend` is `.ioUring` (with `.auto`, the
    /// default, the runtime runs on epoll instead and says so on stderr),
    /// `.epollUnavailable` when epoll cannot be set up either.
    @discardableResult
    public static func start(configuration: RuntimeConfiguration) throws(RuntimeError) -> Runtime {
        try configuration.validate()
        return try StartRequest.shared.startExplicitly(configuration, profile: nil)
    }

    /// Starts the runtime with a board profile's configuration, and pins worker bands
    /// to big or small cores when its `coreCapacities` differ (`CorePlacement`).
    /// Throws as `start(configuration:)` does.
    ///
    ///     try Runtime.start(profile: BoardProfile.named("orange-pi-5"))
    @discardableResult
    public static func start(profile: BoardProfile) throws(RuntimeError) -> Runtime {
        try profile.configuration.validate()
        return try StartRequest.shared.startExplicitly(profile.configuration, profile: profile)
    }

    /// The running runtime; on first use starts it with the profile `BoardSelection`
    /// chooses (RINGLET_BOARD, else detection, else generic). Traps with the reason
    /// when the runtime cannot start or RINGLET_BOARD names a bad profile.
    public static var current: Runtime { shared }

    static let shared: Runtime = StartRequest.shared.runtimeForFirstUse()

    /// The runtime if one has started, without starting one (`shared` would): for a
    /// report that must not start a runtime in a process that has none, such as the
    /// tests' dump when a bounded wait runs out.
    static var startedIfAny: Runtime? { StartRequest.shared.started }

    /// Creates the manager and every pool thread.
    fileprivate static func make(_ configuration: RuntimeConfiguration,
                                 profile: BoardProfile?) throws(RuntimeError) -> Runtime {
        ForkGuard.install()
        StackGuard.install()
        // Before any pool thread exists: each would make a malloc arena of its own.
        Memory.limitMallocArenas(configuration.mallocArenas)
        let request = try BackendRequest.resolve(configuration)
        Runtime.startTraceIfAsked(configuration)
        let runtime = try Runtime(configuration: configuration, profile: profile, backend: request)
        do throws(RuntimeError) {
            try runtime.manager.start()
        } catch {
            throw error.explained(for: configuration, poolFailed: false)
        }
        do throws(RuntimeError) {
            try runtime.scheduler.start()
        } catch {
            throw error.explained(for: configuration, poolFailed: true,
                                  ioHelperThreads: runtime.manager.helperThreads)
        }
        // Before the runtime is published: jobs enqueued from now on wait for it.
        runtime.runsSwiftConcurrency = ConcurrencyExecutors.install(configuration)
        return runtime
    }

    /// Whether the calling thread is the process's main thread: the one that drains
    /// the main queue in `dispatchMain()` and runs `@MainActor` work. O(1).
    public static var isMainThread: Bool { ThreadContext.current.isMainThread }

    /// Ends the process with `status` (exit(3)). For programs, such as Embedded
    /// Swift ones, that have no C library module to call `exit` through.
    public static func exit(status: Int32) -> Never { ThreadControl.exitProcess(status) }

    /// Counters describing the pool right now. Cost: takes the scheduler and pool
    /// locks briefly; fine to call once a second, not per item.
    public static var statistics: RuntimeStatistics { shared.statistics }

    /// The runtime's threads are named ringlet-wN (workers), ringlet-rN (reserve),
    /// ringlet-m (the manager) and ringlet-ioN (the epoll backend's I/O helpers).
    private var poolContextSwitches: Int {
        guard let workers = ThreadControl.contextSwitches(threadsNamed: "ringlet-w"),
              let reserve = ThreadControl.contextSwitches(threadsNamed: "ringlet-r"),
              let manager = ThreadControl.contextSwitches(threadsNamed: "ringlet-m"),
              let helpers = ThreadControl.contextSwitches(threadsNamed: "ringlet-io") else { return -1 }
        return workers + reserve + manager + helpers
    }

    public var statistics: RuntimeStatistics {
        let snapshot = scheduler.snapshot()
        let totals = CounterRegistry.shared.totals()
        let pending = QoSLevel.allLevels.map { totals.submitted[$0.rawValue] - totals.ran[$0.rawValue] }
        return RuntimeStatistics(
            workers: configuration.workers, reserve: configuration.reserve, managerThreads: 1,
            ioThreads: manager.helperThreads, backend: backend.backend,
            timersArmed: manager.counters.armedTimers, managerWakeups: manager.counters.wakeups,
            reserveInUse: snapshot.activeReserve, blockedThreads: snapshot.blocked,
            parkedThreads: snapshot.parked,
            runnablePerQoS: QoSCounts(snapshot.pending), pendingPerQoS: QoSCounts(pending),
            itemsRunPerQoS: QoSCounts(totals.ran), jobsRun: totals.jobs.ran,
            jobsPending: totals.jobs.submitted - totals.jobs.ran, swiftConcurrencyOnRinglet: runsSwiftConcurrency,
            workNodesInUse: pool.inUse, workNodesPeak: pool.peakInUse,
            workNodeCapacity: pool.capacity, workNodeExhaustionWaits: pool.exhaustionWaits,
            workNodeBacklogYields: pool.backlogYieldCount,
            processThreads: ThreadControl.processThreadCount ?? -1,
            poolContextSwitches: poolContextSwitches, stallWatchArmed: snapshot.watching,
            workersBlockedInKernel: snapshot.coveredNow, workersCoveredInKernel: snapshot.coveredTotal,
            drainSpins: CounterRegistry.shared.spinTotal(),
            mainThreadWatches: MainThread.shared.watches,
            mainThreadWatchesCaught: MainThread.shared.watchesCaught,
            mainQueueStallReports: MainThread.shared.stallReports,
            workerWakesInManagerWait: manager.workerWakesInWaitCount,
            strictTimerFiresStaged: StrictTimerStages.stagedCount,
            strictTimerFiresReachedLate: StrictTimerStages.reachedLateCount,
            traceEventsRecorded: TraceRecorder.shared.recordedTotal,
            memoryPressureTrims: MemoryTrim.trims, memoryTrimmedBytes: MemoryTrim.bytes,
            timersKeptByBands: scheduler.bandTimerCounts.armed, bandWindowsFired: scheduler.bandTimerCounts.windows,
            bandWindowsFiredByManager: manager.bandWindowsFiredByManagerCount,
            wakesTakenByFiringWorker: scheduler.bandTimerCounts.wakesTaken,
            descriptorEventsTakenByBands: scheduler.bandDescriptorEvents.byBands,
            descriptorEventsTakenByManager: scheduler.bandDescriptorEvents.byManager,
            socketRequestsInFlight: manager.socketCounts.inFlight, socketRequestsPeak: manager.socketCounts.peak,
            acceptsSkipped: manager.socketCounts.acceptsSkipped, socketReceiveBuffers: manager.socketCounts.buffers,
            socketReceiveBuffersHeld: manager.socketCounts.buffersHeld,
            socketReceiveBufferWaits: manager.socketCounts.bufferWaits,
            socketReceiveBuffersProvided: manager.socketCounts.provided,
            importanceClamp: Importance.clamp?.qosClass, itemsClamped: Importance.itemsClamped,
            boostsBegun: Importance.boostsBegun, boostReferences: Importance.boostReferences)
    }
}

/// Which runtime the process has: started explicitly, or on first use.
// @unchecked Sendable: `starting` and `runtime` under `lock`.
private final class StartRequest: @unchecked Sendable {
    static let shared = StartRequest()
    private let lock = FutexLock()
    private let published = FutexEvent()
    private var starting = false
    private var runtime: Runtime?

    /// The runtime published so far (nil: none has started, or its start is under way).
    var started: Runtime? { lock.withLock { runtime } }

    func startExplicitly(_ configuration: RuntimeConfiguration, profile: BoardProfile?) throws(RuntimeError) -> Runtime {
        let claimed = lock.withLock { () -> Bool in
            if starting { return false }
            starting = true
            return true
        }
        if !claimed { throw RuntimeError.alreadyStarted }
        do throws(RuntimeError) {
            let made = try Runtime.make(configuration, profile: profile)
            lock.withLock { runtime = made }
            published.post(wake: Int32.max)
            Self.runtimeDidStart()
            // Not inside `Runtime.shared`'s initialisation here: main-actor jobs held
            // before the start go to the main queue now, ahead of anything submitted next.
            Runtime.moveHeldMainJobs()
            return made
        } catch {
            // Threads already created stay parked; a later start may try again.
            lock.withLock { starting = false }
            published.post(wake: Int32.max)
            throw error
        }
    }

    /// Tells the main executor's loop before the start (MainJobsBeforeStart) that the
    /// runtime is there. Pushes nothing: this may run inside `Runtime.shared`'s
    /// initialisation, which a push would enter again (`Runtime.moveHeldMainJobs` pushes,
    /// after it).
    private static func runtimeDidStart() {
        #if !hasFeature(Embedded) && compiler(>=6.3)
        MainJobsBeforeStart.shared.runtimeDidStart()
        #endif
    }

    /// The runtime for `Runtime.shared`: the explicitly started one (waiting for it
    /// if its start is under way), else one started now with the chosen board profile.
    func runtimeForFirstUse() -> Runtime {
        while true {
            let seen = published.snapshot
            lock.lock()
            if let runtime {
                lock.unlock()
                return runtime
            }
            if !starting {
                starting = true
                lock.unlock()
                do throws(RuntimeError) {
                    let profile = Runtime.profileForFirstUse(FirstUseBoard.choose())
                    let made = try Runtime.make(profile?.configuration ?? .derived(), profile: profile)
                    lock.withLock { runtime = made }
                    Self.runtimeDidStart()
                    return made
                } catch {
                    ringletMisuse("the runtime could not start: \(error)")
                }
            }
            lock.unlock()
            _ = published.wait(ifUnchangedFrom: seen)
        }
    }
}

extension Runtime {
    /// Moves the main-actor jobs held before the start to the main queue, in order
    /// (MainJobsBeforeStart), once the runtime's parts are published or an explicit start
    /// returns: before anything submitted after the start reaches the main queue, and
    /// whether or not the main thread ever drains it (the stall report then names it).
    static func moveHeldMainJobs() {
        #if !hasFeature(Embedded) && compiler(>=6.3)
        MainJobsBeforeStart.shared.moveToMainQueue()
        #endif
    }

    /// The profile board selection chose (`BoardSelection.profileForFirstUse()`), or
    /// nil for `RuntimeConfiguration.derived()`: also when the program was linked
    /// without selection (for an explicit start) yet used the runtime before starting
    /// it, which one warning says, naming RINGLET_BOARD when it is set.
    static func profileForFirstUse(_ choice: FirstUseBoard.Choice) -> BoardProfile? {
        switch choice {
        case .chosen(let profile):
            return profile
        case .notLinked:
            let board = ThreadControl.environment("RINGLET_BOARD").map { " (RINGLET_BOARD=\($0) is not read)" } ?? ""
            ringletWarning("the runtime was used before Runtime.start, in a program linked without board selection "
                + "(ringlet_first_use.c with RINGLET_EXPLICIT_START); starting with RuntimeConfiguration.derived()"
                + board + ". Call Runtime.start(configuration:) before the first queue is used, or link without "
                + "RINGLET_EXPLICIT_START to let the runtime choose a board profile")
            return nil
        }
    }
}
