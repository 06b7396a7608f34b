/// Which run-queue levels a worker may take, and the kernel priority it holds.
///
/// Linux lets an unprivileged thread lower its CPU priority but never raise it again
/// (sched(7): leaving SCHED_IDLE or lowering nice needs RLIMIT_NICE or CAP_SYS_NICE,
/// both absent by default). So a worker cannot follow each item's QoS into the
/// kernel; instead each worker belongs to a band fixed at start, set with one
/// syscall when the thread starts and never again:
///
///   band        takes                      kernel priority
///   ----------  -------------------------  ------------------------------
///   high        default .. userInteractive  nice 0
///   utility     utility, then background    nice `utilityNice` (default 5)
///   background  background                  SCHED_IDLE (or nice 19)
///   reserve     anything, highest first     nice 0; runs only while it
///                                           covers a blocked worker
///
/// The low bands hold `lowQoSWorkers` workers (default one per core), so utility
/// and background items, however long, never occupy more than that share of the
/// pool: user-interactive work always finds a high-band worker.
enum WorkerBand: Int, CaseIterable {
    case high = 0
    case utility = 1
    case background = 2
    case reserve = 3

    /// The inclusive range of run-queue indices (see `RunQueueIndex`) this band takes.
    var indices: ClosedRange<Int> {
        switch self {
        case .high: return RunQueueIndex.first(of: .default)...RunQueueIndex.last
        case .utility: return 0...RunQueueIndex.last(of: .utility)
        case .background: return 0...RunQueueIndex.last(of: .background)
        case .reserve: return 0...RunQueueIndex.last
        }
    }

    /// The band whose idle workers are woken first for work at `index`, and the one
    /// tried next (background work may also wake a utility-band worker).
    @inline(__always)
    static func wakeOrder(for index: Int) -> (first: WorkerBand, second: WorkerBand?) {
        if index >= RunQueueIndex.first(of: .default) { return (.high, nil) }
        if index >= RunQueueIndex.first(of: .utility) { return (.utility, nil) }
        return (.background, .utility)
    }

    var name: String {
        switch self {
        case .high: return "high"
        case .utility: return "utility"
        case .background: return "background"
        case .reserve: return "reserve"
        }
    }
}

/// Run-queue indices: 16 per QoS class (relative priority -15...0), classes ordered
/// background < utility < default < userInitiated < userInteractive, so a higher index
/// is always more urgent. Unspecified work runs at default.
enum RunQueueIndex {
    static let perClass = 16
    static let count = 5 * perClass
    static let last = count - 1

    static func classOrdinal(_ level: QoSLevel) -> Int {
        switch level {
        case .unspecified, .default: return 2
        case .background: return 0
        case .utility: return 1
        case .userInitiated: return 3
        case .userInteractive: return 4
        }
    }

    static func first(of level: QoSLevel) -> Int { classOrdinal(level) * perClass }
    static func last(of level: QoSLevel) -> Int { classOrdinal(level) * perClass + perClass - 1 }

    @inline(__always)
    static func of(_ priority: QoSPriority) -> Int {
        classOrdinal(priority.level) * perClass + 15 + Int(priority.relativePriority)
    }

    static func level(ofIndex index: Int) -> QoSLevel {
        switch index / perClass {
        case 0: return .background
        case 1: return .utility
        case 2: return .default
        case 3: return .userInitiated
        default: return .userInteractive
        }
    }
}
