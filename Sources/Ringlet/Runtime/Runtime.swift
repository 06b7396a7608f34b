import CRinglet

/// The process's Ringlet runtime: the fixed worker pool, the work-node pool and the
/// root queues. It starts once — on first use of any queue, or explicitly with
/// `Runtime.start(configuration:)` — and lives until the process exits.
///
/// Starting creates every pool thread the runtime will ever have
/// (`configuration.poolThreads`); nothing creates threads afterwards.
public final class Runtime: @unchecked Sendable {
    /// The configuration in force.
    public let configuration: RuntimeConfiguration
    let scheduler: Scheduler
    /// The thread that owns the io_uring and the timers.
    let manager: ManagerThread
    var pool: WorkNodePool { scheduler.pool }

    private init(configuration: RuntimeConfiguration) {
        self.configuration = configuration
        scheduler = Scheduler(configuration: configuration)
        manager = ManagerThread(configuration: configuration)
    }

    /// Starts the runtime with `configuration`. Call it before any queue is used;
    /// afterwards it throws `.alreadyStarted`. Throws `.invalidConfiguration` naming
    /// the key when a value is out of range, `.threadCreationFailed` when the system
    /// refuses a thread.
    @discardableResult
    public static func start(configuration: RuntimeConfiguration) throws(RuntimeError) -> Runtime {
        try configuration.validate()
        let claimed = StartRequest.shared.claim(configuration)
        if !claimed { throw RuntimeError.alreadyStarted }
        if let error = StartRequest.shared.failure { throw error }
        return shared
    }

    /// The running runtime; starts it with the derived configuration on first use.
    /// Traps with the reason when the runtime cannot start.
    public static var current: Runtime { shared }

    static let shared: Runtime = {
        let configuration = StartRequest.shared.configurationForStart()
        let runtime = Runtime(configuration: configuration)
        do throws(RuntimeError) {
            try runtime.manager.start()
            try runtime.scheduler.start()
        } catch {
            StartRequest.shared.failure = error
            ringletMisuse("the runtime could not start: \(error)")
        }
        return runtime
    }()

    /// Ends the process with `status` (exit(3)). For programs, such as Embedded
    /// Swift ones, that have no C library module to call `exit` through.
    public static func exit(status: Int32) -> Never { rl_exit(status) }

    /// Counters describing the pool right now. Cost: takes the scheduler and pool
    /// locks briefly; fine to call once a second, not per item.
    public static var statistics: RuntimeStatistics { shared.statistics }

    /// The runtime's threads are named ringlet-wN (workers), ringlet-rN (reserve)
    /// and ringlet-m (the manager).
    private var poolContextSwitches: Int {
        guard let workers = ThreadControl.contextSwitches(threadsNamed: "ringlet-w"),
              let reserve = ThreadControl.contextSwitches(threadsNamed: "ringlet-r"),
              let manager = ThreadControl.contextSwitches(threadsNamed: "ringlet-m") else { return -1 }
        return workers + reserve + manager
    }

    public var statistics: RuntimeStatistics {
        let snapshot = scheduler.snapshot()
        let totals = CounterRegistry.shared.totals()
        let pending = QoSLevel.allLevels.map { totals.submitted[$0.rawValue] - totals.ran[$0.rawValue] }
        return RuntimeStatistics(
            workers: configuration.workers, reserve: configuration.reserve, managerThreads: 1,
            timersArmed: manager.counters.armedTimers, managerWakeups: manager.counters.wakeups,
            reserveInUse: snapshot.activeReserve, blockedThreads: snapshot.blocked,
            parkedThreads: snapshot.parked,
            runnablePerQoS: QoSCounts(snapshot.pending), pendingPerQoS: QoSCounts(pending),
            itemsRunPerQoS: QoSCounts(totals.ran),
            workNodesInUse: pool.inUse, workNodesPeak: pool.peakInUse,
            workNodeCapacity: pool.capacity, workNodeExhaustionWaits: pool.exhaustionWaits,
            processThreads: ThreadControl.processThreadCount ?? -1,
            poolContextSwitches: poolContextSwitches)
    }
}

/// Holds the configuration requested before start, and whether start was claimed.
private final class StartRequest: @unchecked Sendable {
    static let shared = StartRequest()
    private let lock = FutexLock()
    private var requested: RuntimeConfiguration?
    private var started = false
    var failure: RuntimeError?

    /// Returns false when the runtime already started (or another start won).
    func claim(_ configuration: RuntimeConfiguration) -> Bool {
        lock.withLock {
            if started || requested != nil { return false }
            requested = configuration
            return true
        }
    }

    func configurationForStart() -> RuntimeConfiguration {
        lock.withLock {
            started = true
            return requested ?? .derived()
        }
    }
}
