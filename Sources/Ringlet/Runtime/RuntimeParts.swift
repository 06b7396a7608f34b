/// The runtime's parts as unmanaged references, for the per-item paths.
///
/// Every `Runtime.shared.pool` on a hot path would retain and release the runtime
/// and the pool, and those reference counts are cache lines every submitting and
/// draining thread writes. The runtime lives until the process exits, so its parts
/// can be used through unmanaged references; configuration values are copied here.
struct RuntimeParts {
    static let shared = RuntimeParts(Runtime.shared)

    let pool: Unmanaged<WorkNodePool>
    let scheduler: Unmanaged<Scheduler>
    let manager: Unmanaged<ManagerThread>
    let poolThreads: Int
    let drainBatch: Int
    let spinMicroseconds: Int

    private init(_ runtime: Runtime) {
        pool = Unmanaged.passUnretained(runtime.pool)
        scheduler = Unmanaged.passUnretained(runtime.scheduler)
        manager = Unmanaged.passUnretained(runtime.manager)
        poolThreads = runtime.configuration.poolThreads
        drainBatch = runtime.configuration.drainBatch
        spinMicroseconds = runtime.configuration.spinMicroseconds
    }

    @inline(__always)
    static func withPool<R>(_ body: (WorkNodePool) -> R) -> R {
        shared.pool._withUnsafeGuaranteedRef(body)
    }

    @inline(__always)
    static func withScheduler<R>(_ body: (Scheduler) -> R) -> R {
        shared.scheduler._withUnsafeGuaranteedRef(body)
    }
}
