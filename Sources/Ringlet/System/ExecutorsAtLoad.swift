import CRinglet

/// What happened to Swift concurrency's executors when the program was loaded, before
/// main (ringlet_executors.c): Ringlet installed its own, or the program kept the
/// toolchain's, and how it said so.
enum ExecutorsAtLoad: Equatable {
    /// This build has no executor hooks (Embedded Swift, Swift before 6.3).
    case notAvailable
    /// Ringlet's executors were installed before main.
    case installed
    /// RINGLET_SWIFT_CONCURRENCY=toolchain kept the toolchain's.
    case keptByEnvironment
    /// The program defines `ringlet_keep_toolchain_executors`.
    case keptBySymbol
    /// RINGLET_SWIFT_CONCURRENCY held neither `toolchain` nor `ringlet`: the toolchain's
    /// were kept, and the runtime says so when it starts.
    case badEnvironment

    static var current: ExecutorsAtLoad {
        switch rl_executors_at_load() {
        case RL_EXECUTORS_INSTALLED: return .installed
        case RL_EXECUTORS_KEPT_BY_ENVIRONMENT: return .keptByEnvironment
        case RL_EXECUTORS_KEPT_BY_SYMBOL: return .keptBySymbol
        case RL_EXECUTORS_BAD_ENVIRONMENT: return .badEnvironment
        default: return .notAvailable
        }
    }

    /// How the program kept the toolchain's executors, for a message.
    var reason: String {
        switch self {
        case .notAvailable: return "no executor hooks in this build"
        case .installed: return "Ringlet's executors were installed at load"
        case .keptByEnvironment: return "RINGLET_SWIFT_CONCURRENCY=toolchain"
        case .keptBySymbol: return "the program defines ringlet_keep_toolchain_executors"
        case .badEnvironment: return "RINGLET_SWIFT_CONCURRENCY holds neither 'toolchain' nor 'ringlet'"
        }
    }
}
