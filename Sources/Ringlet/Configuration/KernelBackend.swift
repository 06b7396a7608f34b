/// The kernel interface the manager thread runs on (Architecture, "The epoll backend").
public enum KernelBackend: Sendable, Equatable, CustomStringConvertible {
    /// io_uring: readiness, timeouts and DispatchIO's reads and writes as ring requests.
    case ioUring
    /// epoll, a timerfd, signalfd, pidfd, inotify and eventfds, with reads and writes
    /// made without blocking and a few I/O helper threads for regular files: where the
    /// kernel or a container refuses io_uring.
    case epoll

    public var description: String { self == .ioUring ? "io_uring" : "epoll" }

    /// Threads this backend adds to the pool and the manager, created at start: the
    /// epoll backend's I/O helpers (2), none on io_uring.
    public var helperThreads: Int { self == .epoll ? ManagerThread.epollHelperThreads : 0 }
}

extension RuntimeConfiguration {
    /// Which backend the manager runs on (the `backend` key). The environment variable
    /// RINGLET_BACKEND, when set, overrides it.
    public enum BackendChoice: Sendable, Equatable, CustomStringConvertible {
        /// io_uring, or epoll when the kernel or a container refuses io_uring (the default).
        case auto
        /// io_uring only: the runtime refuses to start without it (`RuntimeError.ioUringUnavailable`).
        case ioUring
        /// epoll, even where io_uring works.
        case epoll

        /// The value as written in a profile or RINGLET_BACKEND.
        public var description: String {
            switch self {
            case .auto: return "auto"
            case .ioUring: return "io_uring"
            case .epoll: return "epoll"
            }
        }

        /// The choice spelled exactly as `bytes` (`auto`, `io_uring`, `epoll`), or nil.
        /// Bytes, not String comparison, so that Embedded builds need no Unicode tables.
        /// Emitted into the caller (no unspecialized trap in Ringlet's Embedded object).
        @_alwaysEmitIntoClient
        public static func named<Bytes: Sequence>(_ bytes: Bytes) -> BackendChoice? where Bytes.Element == UInt8 {
            _named(spelled: Array(bytes))
        }

        @usableFromInline
        static func _named(spelled: [UInt8]) -> BackendChoice? {
            for choice in [BackendChoice.auto, .ioUring, .epoll] where choice.description.utf8.elementsEqual(spelled) {
                return choice
            }
            return nil
        }
    }
}

/// Which backend the runtime runs on, and why (`Runtime.backend`, `ringlet board`, and
/// the line the runtime prints when it runs on epoll).
public struct BackendSelection: Sendable, CustomStringConvertible {
    public enum Reason: Sendable {
        /// `auto`, and io_uring works here.
        case ioUringWorks
        /// Asked for by name: `how` is "RINGLET_BACKEND=epoll" or "the configuration's backend = epoll".
        case requested(how: String)
        /// `auto`, and io_uring was refused (the payload says why and how to fix it).
        case ioUringRefused(RingUnavailable)
    }

    public let backend: KernelBackend
    public let reason: Reason

    /// "io_uring (it works here)", "epoll (RINGLET_BACKEND=epoll)", "epoll (io_uring is not available: ...)".
    public var description: String {
        switch reason {
        case .ioUringWorks: return "\(backend) (backend = auto, and io_uring works here)"
        case .requested(let how): return "\(backend) (\(how))"
        case .ioUringRefused(let refusal): return "\(backend) (io_uring is not available: \(refusal.cause))"
        }
    }

    /// The one line the runtime writes to stderr when it starts on epoll (nil on io_uring):
    /// on a refusal, the cause, that it fell back, and the fix.
    var startLine: String? {
        switch reason {
        case .ioUringWorks: return nil
        case .requested(let how): return backend == .epoll ? "Ringlet: running on epoll (\(how))" : nil
        case .ioUringRefused(let refusal):
            // The cause, the fallback, and the two ways out: get io_uring back, or ask
            // for epoll by name (which prints the shorter "running on epoll" line).
            let fix = refusal.fix.map { "; to use io_uring, \($0)" } ?? ""
            return "Ringlet: io_uring is not available (\(refusal.cause)): running on epoll instead\(fix)"
                + "; RINGLET_BACKEND=epoll or backend = epoll chooses epoll without this warning"
        }
    }

    /// The backend the runtime would run on under `configuration` here, and why: the
    /// same choice `Runtime.start` makes, from RINGLET_BACKEND and the `backend` key,
    /// probing io_uring with a small ring. Starts nothing. Throws what the start would
    /// throw when the choice cannot work (`.ioUringUnavailable` for `io_uring` here, a
    /// bad RINGLET_BACKEND).
    public static func predict(for configuration: RuntimeConfiguration) throws(RuntimeError) -> BackendSelection {
        let request = try BackendRequest.resolve(configuration)
        if request.choice == .epoll { return BackendSelection(backend: .epoll, reason: .requested(how: request.how)) }
        do throws(RingUnavailable) {
            _ = try Ring(submissionEntries: 4, completionEntries: 16)
        } catch {
            if request.choice == .ioUring { throw RuntimeError.ioUringUnavailable(error) }
            return BackendSelection(backend: .epoll, reason: .ioUringRefused(error))
        }
        return BackendSelection(backend: .ioUring, reason: request.choice == .ioUring ? .requested(how: request.how) : .ioUringWorks)
    }
}

/// The backend asked for: RINGLET_BACKEND when set, else the configuration's `backend`.
struct BackendRequest {
    let choice: RuntimeConfiguration.BackendChoice
    /// How it was asked for, for messages.
    let how: String

    /// Reads RINGLET_BACKEND (`environment`: tests pass their own). A value that is
    /// not a backend is refused, naming it and the values that work.
    static func resolve(_ configuration: RuntimeConfiguration,
                        environment: String? = ThreadControl.environment("RINGLET_BACKEND"))
        throws(RuntimeError) -> BackendRequest {
        if let environment, !environment.isEmpty {
            guard let choice = RuntimeConfiguration.BackendChoice.named(environment.utf8) else {
                throw RuntimeError.invalidConfiguration(key: "backend", reason: "is set by RINGLET_BACKEND='\(environment)'"
                    + ", which is not a backend: use auto, io_uring or epoll, or unset it")
            }
            return BackendRequest(choice: choice, how: "RINGLET_BACKEND=\(choice)")
        }
        return BackendRequest(choice: configuration.backend, how: "the configuration's backend = \(configuration.backend)")
    }
}
