/// How many threads and records the runtime creates, fixed when it starts.
///
/// Every key here is also a board-profile key (see Boards/README.md); the names
/// match so that errors can name the key to change.
public struct RuntimeConfiguration: Sendable, Equatable {
    /// CPU cores to plan for (`cores`). Default: the online CPUs.
    public var cores: Int
    /// Workers per core (`workersPerCore`, default 2): the pool has
    /// `cores × workersPerCore` workers.
    public var workersPerCore: Int
    /// Reserve workers per core (`reservePerCore`, default 1): they run only while
    /// they cover a worker blocked in a Ringlet wait.
    public var reservePerCore: Int
    /// Workers that may run utility and background work (`lowQoSWorkers`, default
    /// one per core); the rest run only default and higher QoS.
    public var lowQoSWorkers: Int
    /// Capacity of the work-node pool (`workNodes`): pending items, queue wake-ups
    /// and contended syncs, all queues together. Submitters wait when it is full.
    /// Default 131072 here; `derived()` and profiles size it from the memory budget
    /// (`derivedWorkNodes`).
    public var workNodes: Int
    /// Stack size of each pool thread in bytes (`workerStackBytes`).
    public var workerStackBytes: Int
    /// Nice value of utility-band workers (`utilityNice`, 0...19, default 5).
    public var utilityNice: Int
    /// Background-band workers use SCHED_IDLE (`backgroundSchedIdle`, default true);
    /// when false, or when the kernel refuses, they use nice 19.
    public var backgroundSchedIdle: Bool
    /// The stall watch's grace period (`deadlockGraceMilliseconds`, default 2000): how
    /// long work of a QoS class may wait with no thread taking any before the stall
    /// report, and how long every pool thread may stay blocked, with work pending and
    /// nothing running, before the deadlock report. The watch looks every quarter of it,
    /// and only while work waits or the pool is blocked.
    public var deadlockGraceMilliseconds: Int
    /// How long the main queue may hold work that nothing drains — the main thread
    /// is neither in `dispatchMain()` nor in another drain of the main queue — before
    /// the runtime says so on stderr (`mainQueueGraceMilliseconds`, 0...600000,
    /// default 5000; 0: never). `@MainActor` work counts: it runs on the main queue.
    public var mainQueueGraceMilliseconds: Int = 5000
    /// While a DispatchIO operation waits on a pipe, socket or terminal, or a read or
    /// write source is armed, how often the manager looks whether each descriptor
    /// still names its file (`descriptorCheckMilliseconds`, 0...600000, default 5000;
    /// 0: never). One closed or replaced under them is otherwise never noticed on a
    /// quiet file: its operations then end with EBADF and its sources are cancelled,
    /// each with a warning. The look shares a wake-up with other timers when it can
    /// (its window is as wide again), and there is none while nothing waits.
    public var descriptorCheckMilliseconds: Int = 5000
    /// While runnable work waits for a thread, how often the stall watch looks for
    /// workers blocked in the kernel (`coverCheckMilliseconds`, 0...1000, default 5;
    /// 0: never): a worker found sleeping in a syscall on the same item, its CPU
    /// time still, is covered by a reserve worker within about two periods.
    public var coverCheckMilliseconds: Int
    /// Items a worker runs from one queue before it lets other queues of the same
    /// QoS go first (`drainBatch`, default 64).
    public var drainBatch: Int

    /// How long a serial queue's drainer that emptied its queue keeps the queue and
    /// watches for another push before it lets go (`spinMicroseconds`, default 5;
    /// 0: never). A producer that keeps up, or the other half of a ping-pong, then
    /// costs no token and no futex wake-up, which cost more than this on every board.
    /// It is also the unit of the main thread's watch for its next item, ten of them
    /// long, while those items come back to back (Architecture, "Async code runs on the
    /// same pool"); 0 turns both off.
    public var spinMicroseconds: Int

    /// Submission-queue entries of the manager's io_uring (`ringEntries`, 8...4096,
    /// default 64); the completion queue gets four times as many.
    public var ringEntries: Int

    /// Minimum leeway of background timers, in percent of their interval (of the
    /// delay for one-shots) (`backgroundLeewayPercent`, 0...100, default 10), capped at
    /// `backgroundLeewayMaxMilliseconds` (default 1000). `.strict` timers are never widened.
    public var backgroundLeewayPercent: Int
    public var backgroundLeewayMaxMilliseconds: Int
    /// The same for utility timers (`utilityLeewayPercent`, default 5;
    /// `utilityLeewayMaxMilliseconds`, default 250). Default QoS and higher keep the
    /// leeway they ask for.
    public var utilityLeewayPercent: Int
    public var utilityLeewayMaxMilliseconds: Int

    /// Read and write requests one `DispatchIO` channel keeps in flight on the ring
    /// (`ioQueueDepth`, 1...4096, default 64).
    public var ioQueueDepth: Int
    /// Largest single read or write request, in bytes (`ioChunkBytes`, 4096...16777216,
    /// default 262144); longer operations are split into requests of this size.
    public var ioChunkBytes: Int
    /// I/O request records, all channels together (`ioRequests`, 8...65536, default 256):
    /// the bound on requests in flight in the process. A channel waits for a record.
    public var ioRequests: Int
    /// Bytes of read buffers the runtime holds, in flight or waiting for their handler
    /// (`ioBufferBytes`, 65536...1073741824, default 16 MiB, at least one chunk). A slow
    /// handler stops further reads instead of growing memory.
    public var ioBufferBytes: Int

    /// Dispatch sources that may be active at once, all kinds together (`sources`,
    /// 1...1048576, default 16384 here; `derived()` and profiles size it from the
    /// memory budget, `derivedSources`). Activating one more traps with the source's
    /// queue label, this key and what raising it costs (`bytesPerSource` a source): a
    /// leak of uncancelled sources shows at once, not as memory growth.
    public var sources: Int

    /// The kernel interface the manager runs on (`backend`: `auto`, `io_uring` or
    /// `epoll`; default `.auto`: io_uring, else epoll with one line on stderr saying
    /// why). RINGLET_BACKEND overrides it. See `KernelBackend` and `Runtime.backend`.
    public var backend: BackendChoice
    /// Ringlet is the executor of Swift concurrency (`swiftConcurrency`, default true):
    /// its default and main executors, installed when the program is loaded, stay, so
    /// tasks, `async let`, task groups and default actors run on the pool under strict
    /// QoS, `@MainActor` shares the main queue's FIFO and `Task.sleep` is a window in the
    /// manager's timers. False hands async code back to the toolchain's executor
    /// (Dispatch's threads) at the start, when no job has reached Ringlet's yet; after
    /// that (an async main's first job) it cannot, and the start says so: keep the
    /// toolchain's from load with RINGLET_SWIFT_CONCURRENCY=toolchain instead. No effect
    /// where the toolchain lacks the executor hooks (Swift before 6.3), and none in
    /// Embedded Swift, where Ringlet always provides the executor.
    public var swiftConcurrency: Bool
    /// The signal that makes the runtime write its live dump (`Runtime.dump()`) to
    /// stderr and to `/tmp/ringlet-dump-<pid>.txt` without stopping the process
    /// (`dumpSignal`: 0, off, the default; or SIGQUIT 3, SIGUSR1 10, SIGUSR2 12).
    /// The manager thread catches it through its signalfd, so a dump comes even when
    /// every worker is stuck. `ringlet dump <pid>` sends it and prints the file.
    /// Setting it links the dump into the program (`OptionalParts`): a program that
    /// never sets it carries no dump signal.
    public var dumpSignal: Int32 {
        get { dumpSignalNumber }
        set {
            dumpSignalNumber = newValue
            if newValue != 0 { OptionalParts.linkDumpSignal() }
        }
    }
    private var dumpSignalNumber: Int32 = 0

    /// The file the runtime writes its trace timeline to, in Chrome's trace event
    /// format (`trace`: `off`, the default, or a path; the environment variable
    /// RINGLET_TRACE, read at start, overrides it). With a file named, every thread
    /// records its events (items queued, started and finished with their queue and
    /// QoS, workers parking and waking, the manager's wake-ups and timer windows,
    /// source events, DispatchIO requests, sleeps, Swift concurrency jobs) in a ring
    /// of `traceEvents` events allocated at start, and the file is written when the
    /// process exits through exit(3) or a return from `main` (`Runtime.exit` too), or
    /// on demand with `Runtime.writeTrace(to:)`. Off, the cost is one branch per
    /// traced point. The Observing article describes the file and `ringlet trace`.
    /// Setting a file links the trace recorder into the program (`OptionalParts`).
    public var trace: String? {
        get { traceFile?.path }
        set {
            traceFile = newValue.map(TraceFileName.init)
            if newValue != nil { OptionalParts.linkTrace() }
        }
    }
    /// `trace`, stored so that the synthesized `==` compares it byte by byte: String's
    /// own `==` needs Unicode normalization tables, which Embedded Swift builds lack.
    private var traceFile: TraceFileName?
    /// Most malloc arenas the C library may make (`mallocArenas`, 0...1024; default one
    /// per core; 0 leaves the C library's own limit). glibc gives a thread that first
    /// allocates or frees an arena of its own until there are 8 per core, and each
    /// arena keeps at least a page resident: with every pool thread allocating (its
    /// context at start, the closures it frees), that is a page per thread — 13 × 16 KiB
    /// on a Pi 5's 16 KiB pages. Set once at start (glibc's `mallopt(M_ARENA_MAX)`),
    /// before the pool's threads exist; a thread past the cap shares an arena. It
    /// changes nothing where the C library has no such setting, and nothing for
    /// arenas made before the runtime started.
    public var mallocArenas: Int
    /// Events each thread's trace ring holds (`traceEvents`, 16...16777216, rounded up
    /// to a power of two; 32 bytes each): when a ring is full its oldest events are
    /// overwritten and the file says how many were dropped. Memory only while tracing.
    public var traceEvents: Int = 16_384
    /// A memory-pressure source says `.warning` when some task stalled on memory for at
    /// least this share of the window (`memoryWarningSomePercent`, 1...100, default 10:
    /// PSI's `some` line), and `.critical` when every non-idle task stalled at once for
    /// at least `memoryCriticalFullPercent` of it (1...100, default 5: the `full` line).
    public var memoryWarningSomePercent: Int = 10
    public var memoryCriticalFullPercent: Int = 5
    /// The window those shares are measured over (`memoryPressureWindowMilliseconds`,
    /// 500...10000, default 2000: a multiple of 2 s, which a PSI trigger of a process
    /// without CAP_SYS_RESOURCE needs on Linux 6.5 and later).
    public var memoryPressureWindowMilliseconds: Int = 2000
    /// How often a raised level looks for the pressure to have fallen
    /// (`memoryPressureRecheckMilliseconds`, 100...60000, default 1000): a coalescing
    /// timer that runs only while `.warning` or `.critical` is in force.
    public var memoryPressureRecheckMilliseconds: Int = 1000
    /// How often the pressure file is read where the kernel refuses a trigger (before
    /// Linux 6.5 without CAP_SYS_RESOURCE) (`memoryPressurePollMilliseconds`,
    /// 100...60000, default 1000): a coalescing timer while a source is active.
    public var memoryPressurePollMilliseconds: Int = 1000
    /// The largest payload of a message between processes (`serviceMessageBytes`,
    /// 1024...1048576, default 65536): the default of RingletService's
    /// `ServiceOptions.messageBytes`. Both sides of a session must agree; each packet is
    /// one socket buffer's worth at most, so a board with little memory keeps it small.
    public var serviceMessageBytes: Int = 65536

    /// The signals `dumpSignal` accepts, with their profile spelling.
    public static let dumpSignals: [(name: String, number: Int32)] = [("SIGQUIT", 3), ("SIGUSR1", 10), ("SIGUSR2", 12)]

    public init(cores: Int, workersPerCore: Int = 2, reservePerCore: Int = 1,
                lowQoSWorkers: Int? = nil, workNodes: Int = 131_072,
                workerStackBytes: Int = 512 * 1024, utilityNice: Int = 5,
                backgroundSchedIdle: Bool = true, deadlockGraceMilliseconds: Int = 2000,
                coverCheckMilliseconds: Int = 5,
                drainBatch: Int = 64, spinMicroseconds: Int = 5, ringEntries: Int = 64,
                backgroundLeewayPercent: Int = 10, backgroundLeewayMaxMilliseconds: Int = 1000,
                utilityLeewayPercent: Int = 5, utilityLeewayMaxMilliseconds: Int = 250,
                ioQueueDepth: Int = 64, ioChunkBytes: Int = 256 * 1024, ioRequests: Int = 256,
                ioBufferBytes: Int = 16 << 20, sources: Int = 16_384, backend: BackendChoice = .auto,
                swiftConcurrency: Bool = true, mallocArenas: Int? = nil) {
        self.cores = cores
        self.workersPerCore = workersPerCore
        self.reservePerCore = reservePerCore
        self.lowQoSWorkers = lowQoSWorkers ?? cores
        self.workNodes = workNodes
        self.workerStackBytes = workerStackBytes
        self.utilityNice = utilityNice
        self.backgroundSchedIdle = backgroundSchedIdle
        self.deadlockGraceMilliseconds = deadlockGraceMilliseconds
        self.coverCheckMilliseconds = coverCheckMilliseconds
        self.drainBatch = drainBatch
        self.spinMicroseconds = spinMicroseconds
        self.ringEntries = ringEntries
        self.backgroundLeewayPercent = backgroundLeewayPercent
        self.backgroundLeewayMaxMilliseconds = backgroundLeewayMaxMilliseconds
        self.utilityLeewayPercent = utilityLeewayPercent
        self.utilityLeewayMaxMilliseconds = utilityLeewayMaxMilliseconds
        self.ioQueueDepth = ioQueueDepth
        self.ioChunkBytes = ioChunkBytes
        self.ioRequests = ioRequests
        self.ioBufferBytes = ioBufferBytes
        self.sources = sources
        self.backend = backend
        self.swiftConcurrency = swiftConcurrency
        self.mallocArenas = mallocArenas ?? cores
    }

    /// The timer leeway policy these keys describe.
    var leewayPolicy: TimerLeewayPolicy {
        TimerLeewayPolicy(backgroundPercent: UInt64(backgroundLeewayPercent),
                          backgroundCap: UInt64(backgroundLeewayMaxMilliseconds) * 1_000_000,
                          utilityPercent: UInt64(utilityLeewayPercent),
                          utilityCap: UInt64(utilityLeewayMaxMilliseconds) * 1_000_000)
    }

    /// Workers (not counting the reserve).
    public var workers: Int { cores * workersPerCore }
    /// Reserve workers.
    public var reserve: Int { cores * reservePerCore }
    /// Every pool thread the runtime creates.
    public var poolThreads: Int { workers + reserve }

    var deadlockGraceNanoseconds: Int64 { Int64(deadlockGraceMilliseconds) * 1_000_000 }

    /// Threads per band, in creation order.
    var workerPlan: [(WorkerBand, Int)] {
        let low = lowQoSWorkers
        let utility = (low + 1) / 2
        return [(.high, workers - low), (.utility, utility), (.background, low - utility), (.reserve, reserve)]
    }

    /// Checks every key; the error names the key and the allowed range (each key's
    /// own range is its row of `BoardProfileKey.spec`).
    public func validate() throws(RuntimeError) {
        if dumpSignal != 0 && !Self.dumpSignals.contains(where: { $0.number == dumpSignal }) {
            throw Self.invalid("dumpSignal",
                               "must be off (0), SIGQUIT (3), SIGUSR1 (10) or SIGUSR2 (12) (got \(dumpSignal))")
        }
        if let trace, trace.isEmpty || trace.utf8.contains(0) || trace.utf8.count >= 4000 {
            throw Self.invalid("trace", "must name a file to write the trace to, or be off (nil) (got '\(trace)')")
        }
        // Every integer key alone, in the table's order: its row's range.
        var values = self
        for key in BoardProfileKey.allCases {
            let spec = key.spec
            guard spec.low <= spec.high, let value = values.withInteger(key, { $0 }) else { continue }
            try Self.check(value, Int(spec.low), Int(spec.high), spec)
        }
        // The rules between keys, and the ranges that are not one interval.
        if workers < 2 {
            throw Self.invalid("workersPerCore", "cores × workersPerCore must be at least 2: one worker for "
                + "default-and-higher QoS and one for utility and background (got \(workers))")
        }
        if lowQoSWorkers < 1 || lowQoSWorkers >= workers {
            throw Self.invalid("lowQoSWorkers", "must be 1...\(workers - 1) so that both QoS bands have a worker "
                + "(got \(lowQoSWorkers))")
        }
        if workerStackBytes != 0 && (workerStackBytes < 64 * 1024 || workerStackBytes > 64 << 20) {
            throw Self.invalid("workerStackBytes",
                               "must be 0 (system default) or 65536...67108864 (got \(workerStackBytes))")
        }
        if ioBufferBytes < ioChunkBytes {
            throw Self.invalid("ioBufferBytes", "must hold at least one chunk: 'ioChunkBytes' is \(ioChunkBytes) "
                + "(got \(ioBufferBytes))")
        }
    }

    /// Throws unless `low <= value <= high`: "must be low...high (got value)". One call
    /// per key, and the message is made only when the value is out of range.
    @inline(never)
    private static func check(_ value: Int, _ low: Int, _ high: Int, _ key: BoardProfileKey.Spec) throws(RuntimeError) {
        if value < low || value > high { throw invalid(key.name, "must be \(low)...\(high) (got \(value))") }
    }

    private static func invalid(_ key: String, _ reason: String) -> RuntimeError {
        .invalidConfiguration(key: key, reason: reason)
    }
}

/// Why the runtime could not start or a request was refused.
public enum RuntimeError: Error, CustomStringConvertible {
    /// The same error with a thread refusal explained against `configuration`: which
    /// limit refused the thread, and the keys to change (`ThreadRefusal`). The manager
    /// (with the epoll backend's `ioHelperThreads`) is created first, so `created`
    /// counts them when the pool failed.
    func explained(for configuration: RuntimeConfiguration, poolFailed: Bool,
                   ioHelperThreads: Int = 0) -> RuntimeError {
        guard case .threadCreationFailed(let created, let wanted, let errno, nil) = self else { return self }
        let refusal = ThreadRefusal(errno: errno, created: poolFailed ? created + 1 + ioHelperThreads : 0,
                                    configuration: configuration, limits: .current(), ioHelperThreads: ioHelperThreads)
        return .threadCreationFailed(created: created, wanted: wanted, errno: errno, refusal: refusal)
    }

    /// A configuration key holds a value the runtime cannot use.
    case invalidConfiguration(key: String, reason: String)
    /// `Runtime.start(configuration:)` after the runtime had started.
    case alreadyStarted
    /// The system refused to create a pool thread (`created` of `wanted` were made).
    /// `refusal`, filled in by `Runtime.start`, tells which limit refused it and the
    /// keys to change.
    case threadCreationFailed(created: Int, wanted: Int, errno: Errno, refusal: ThreadRefusal? = nil)
    /// The manager could not create its io_uring (the payload names cause and fix):
    /// with `backend = io_uring` only; `auto` runs on epoll instead.
    case ioUringUnavailable(RingUnavailable)
    /// The manager could not set up the epoll backend: `call` failed with `errno`.
    /// `ioUringRefusal`: why io_uring was not used (nil: epoll was asked for).
    case epollUnavailable(call: String, errno: Errno, ioUringRefusal: RingUnavailable?)
    /// The manager could not create its wake-up eventfd.
    case eventfdUnavailable(Errno)
    /// The system refused the memory of a pool sized by configuration key `key`
    /// (`value` records, `bytes` in all); `addressSpaceLimit` is RLIMIT_AS (-1: none).
    case memoryRefused(key: String, value: Int, bytes: Int, addressSpaceLimit: Int)

    public var description: String {
        switch self {
        case .invalidConfiguration(let key, let reason):
            return "invalid runtime configuration: key '\(key)' \(reason)"
        case .alreadyStarted:
            return "Runtime.start(configuration:) was called after the runtime had started: it starts on the "
                + "first use of a queue or a timer, or on Swift concurrency's first job (a Task, an actor, "
                + "Task.sleep; in an async main too). Call Runtime.start first thing in main, before any of those, or "
                + "name the board with RINGLET_BOARD instead"
        case .ioUringUnavailable(let refusal):
            return refusal.description
        case .epollUnavailable(let call, let errno, let refusal):
            var text = "the manager thread could not set up its epoll backend: \(call) failed with \(errno.name)"
            if let advice = ProcessLimits.current().openFilesAdvice(for: errno) {
                text += ": a descriptor is needed, and " + advice
            } else if errno == .tryAgain {
                text += ": the thread limit (RLIMIT_NPROC) or memory for stacks (RLIMIT_AS) refused a thread"
            }
            if let refusal { text += ". io_uring was not available either: " + refusal.description }
            return text
        case .eventfdUnavailable(let errno):
            let advice = ProcessLimits.current().openFilesAdvice(for: errno).map { ": an eventfd is a descriptor, and " + $0 }
            return "the manager thread could not create its eventfd: \(errno.name)" + (advice ?? "")
        case .memoryRefused(let key, let value, let bytes, let limit):
            let limitText = limit < 0 ? "no address-space limit is set, so memory itself ran short"
                : "the address-space limit (RLIMIT_AS, `ulimit -v`) is \(limit) bytes"
            return "the system refused \(bytes) bytes for the pool sized by configuration key '\(key)' "
                + "(\(value) records): \(limitText). Lower '\(key)' in the board profile, or raise the limit"
        case .threadCreationFailed(let created, let wanted, let errno, let refusal):
            if let refusal {
                return "could not create thread \(refusal.created + 1) of the runtime's \(refusal.totalThreads): "
                    + "\(errno.name): \(refusal.description)"
            }
            return "could not create pool thread \(created + 1) of \(wanted): \(errno.name); pthread_create's EAGAIN "
                + "means the thread limit (RLIMIT_NPROC) or memory for stacks (RLIMIT_AS): lower "
                + "'workersPerCore'/'reservePerCore' or 'workerStackBytes', or raise the limit"
        }
    }
}

extension RuntimeConfiguration {
    /// `trace` and `dumpSignal` as the key table sets them (`BoardProfileKey.spec`):
    /// stored without linking their optional part. The table is read by the range
    /// check of every program, so its setters must reference no optional part; the
    /// parser links what a profile turned on once it has parsed (`linkOptionalParts`).
    mutating func storeTraceUnlinked(_ path: String?) { traceFile = path.map(TraceFileName.init) }
    mutating func storeDumpSignalUnlinked(_ number: Int32) { dumpSignalNumber = number }

    /// Links the optional parts this configuration turns on (`OptionalParts`), as
    /// setting `trace` or `dumpSignal` does.
    func linkOptionalParts() {
        if traceFile != nil { OptionalParts.linkTrace() }
        if dumpSignalNumber != 0 { OptionalParts.linkDumpSignal() }
    }
}

/// A trace file's path compared as bytes (`RuntimeConfiguration.trace`).
struct TraceFileName: Equatable, Sendable {
    let path: String

    static func == (left: TraceFileName, right: TraceFileName) -> Bool { left.path.utf8.elementsEqual(right.path.utf8) }
}
