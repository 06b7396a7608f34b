import Synchronization

/// The runtime's parts as unmanaged references, for the per-item paths.
///
/// Every `Runtime.shared.pool` on a hot path would retain and release the runtime
/// and the pool, and those reference counts are cache lines every submitting and
/// draining thread writes. The runtime lives until the process exits, so its parts
/// can be used through unmanaged references; configuration values are copied here.
///
/// `shared` is one load: the parts sit in a block that is never freed, published
/// through an atomic word the compiler initializes statically. A `static let` of
/// the parts themselves would be a lazy global, a call to `swift_once` on every
/// access, which shows in a profile of an empty item's time in `serial async`.
struct RuntimeParts {
    /// The address of the published parts; 0 until the runtime is first used.
    private static let published = Atomic<UInt>(0)

    @inline(__always)
    static var shared: RuntimeParts {
        let address = published.load(ordering: .acquiring)
        if address != 0, let parts = UnsafePointer<RuntimeParts>(bitPattern: address) { return parts.pointee }
        return publish()
    }

    /// The first use: `Runtime.shared` starts the runtime (once, however many threads
    /// arrive here), then one block of parts is published; a thread that lost the race
    /// frees its own and uses the winner's.
    @inline(never)
    private static func publish() -> RuntimeParts {
        let block = UnsafeMutablePointer<RuntimeParts>.allocate(capacity: 1)
        block.initialize(to: RuntimeParts(Runtime.shared))
        let (exchanged, winner) = published.compareExchange(expected: 0, desired: UInt(bitPattern: block),
                                                            ordering: .acquiringAndReleasing)
        if exchanged {
            // The first use that started the runtime: jobs held before it go first.
            Runtime.moveHeldMainJobs()
            return block.pointee
        }
        block.deinitialize(count: 1)
        block.deallocate()
        return UnsafePointer<RuntimeParts>(bitPattern: winner)!.pointee
    }

    let pool: Unmanaged<WorkNodePool>
    let scheduler: Unmanaged<Scheduler>
    let manager: Unmanaged<ManagerThread>
    let poolThreads: Int
    let drainBatch: Int
    let spinMicroseconds: Int
    let mainQueueGraceMilliseconds: Int

    private init(_ runtime: Runtime) {
        pool = Unmanaged.passUnretained(runtime.pool)
        scheduler = Unmanaged.passUnretained(runtime.scheduler)
        manager = Unmanaged.passUnretained(runtime.manager)
        poolThreads = runtime.configuration.poolThreads
        drainBatch = runtime.configuration.drainBatch
        spinMicroseconds = runtime.configuration.spinMicroseconds
        mainQueueGraceMilliseconds = runtime.configuration.mainQueueGraceMilliseconds
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
