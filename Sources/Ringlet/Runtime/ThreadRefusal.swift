/// Why the system refused one of the runtime's threads at start, as far as the
/// process can tell, with the configuration keys and the limit to change.
///
/// pthread_create(3) says EAGAIN for two different shortages: the thread limit
/// (RLIMIT_NPROC, kernel.threads-max, a cgroup's pids.max) and memory for the new
/// thread's stack (RLIMIT_AS, or strict overcommit). The limits are read when the
/// refusal happens (`ProcessLimits.current()`) and compared with what the
/// configuration asks for: `workerStackBytes` per thread, `cores × (workersPerCore +
/// reservePerCore) + 1` threads.
public struct ThreadRefusal: Sendable, Equatable, CustomStringConvertible {
    /// The limit that was reached, or the best guess.
    public enum Cause: Sendable, Equatable {
        /// RLIMIT_AS: the address space has no room for another stack.
        case addressSpace
        /// vm.overcommit_memory = 2: stacks count against the commit limit.
        case committedMemory
        /// RLIMIT_NPROC: threads of this user, all processes together.
        case userThreads
        /// The cgroup's pids.max (a container's thread cap).
        case cgroupPids
        /// kernel.threads-max.
        case systemThreads
        /// EAGAIN with no limit that shows as reached.
        case unknownShortage
        /// EINVAL: the stack size was refused.
        case stackSize
        /// Another errno.
        case other
    }

    public let errno: Errno
    /// Threads of the runtime created before the refused one (the manager first).
    public let created: Int
    public let configuration: RuntimeConfiguration
    public let limits: ProcessLimits
    /// The epoll backend's I/O helper threads, created with the manager (0 on io_uring).
    public let ioHelperThreads: Int

    public init(errno: Errno, created: Int, configuration: RuntimeConfiguration, limits: ProcessLimits,
                ioHelperThreads: Int = 0) {
        self.errno = errno
        self.created = created
        self.ioHelperThreads = ioHelperThreads
        self.configuration = configuration
        self.limits = limits
    }

    /// Every thread the runtime creates: the pool, the manager and, on epoll, the I/O
    /// helper threads.
    public var totalThreads: Int { configuration.poolThreads + 1 + ioHelperThreads }
    /// Threads still to create, the refused one included.
    var remaining: Int { max(1, totalThreads - created) }
    /// What one thread's stack maps: `workerStackBytes` (0: RLIMIT_STACK, as glibc
    /// does, else 8 MiB) and a guard page.
    var stackBytesPerThread: Int {
        let stack = configuration.workerStackBytes > 0 ? configuration.workerStackBytes : (limits.stackBytes ?? 8 << 20)
        return stack + 4096
    }

    public var cause: Cause {
        if errno == .invalidArgument { return .stackSize }
        guard errno == .tryAgain || errno == .noMemory else { return .other }
        // The stacks still to create do not fit under RLIMIT_AS: whatever else is
        // short, the start cannot finish until that changes. (Room for one stack is
        // not enough to acquit it: other threads' mappings come and go meanwhile.)
        if let limit = limits.addressSpaceBytes, let used = limits.addressSpaceInUseBytes,
           used + remaining * stackBytesPerThread > limit { return .addressSpace }
        if let maximum = limits.cgroupPidsMax, let now = limits.cgroupPids, now >= maximum { return .cgroupPids }
        if let maximum = limits.systemThreadsMax, let now = limits.systemThreads, now >= maximum { return .systemThreads }
        if errno == .tryAgain && limits.userThreads != nil { return .userThreads }
        if limits.overcommitMode == 2 { return .committedMemory }
        return .unknownShortage
    }

    public var description: String {
        let c = configuration
        let stackKey = "'workerStackBytes' (\(c.workerStackBytes)\(c.workerStackBytes == 0 ? ": the system default" : ""))"
        let shape = "the runtime creates \(totalThreads) threads: 'cores' \(c.cores) × ('workersPerCore' "
            + "\(c.workersPerCore) + 'reservePerCore' \(c.reservePerCore)) + 1 manager"
            + (ioHelperThreads > 0 ? " + \(ioHelperThreads) I/O helper threads of the epoll backend" : "")
        let lowerThreads = "lower 'workersPerCore' (\(c.workersPerCore)) or 'reservePerCore' (\(c.reservePerCore))"
        let stackNeed = "the \(remaining) thread\(remaining == 1 ? "" : "s") still to create need \(remaining) × "
            + "\(stackBytesPerThread) = \(remaining * stackBytesPerThread) bytes of stack (guard pages included)"
        switch cause {
        case .addressSpace:
            return "memory for thread stacks ran out: the address-space limit RLIMIT_AS is "
                + "\(limits.addressSpaceBytes ?? 0) bytes and the process maps \(limits.addressSpaceInUseBytes ?? 0) "
                + "already; \(stackNeed). Lower \(stackKey), or \(lowerThreads) (\(shape)), or raise RLIMIT_AS "
                + "(`ulimit -v`, LimitAS= in a systemd unit)"
        case .committedMemory:
            return "memory for thread stacks ran out: vm.overcommit_memory is 2 (strict accounting), so every stack "
                + "counts against CommitLimit (/proc/meminfo); \(stackNeed). Lower \(stackKey), or \(lowerThreads) "
                + "(\(shape)), or free memory"
        case .userThreads:
            let own = limits.processThreads.map { " (this process has \($0))" } ?? ""
            return "the thread limit: RLIMIT_NPROC allows \(limits.userThreads ?? 0) threads for this user, all of "
                + "its processes together\(own); \(shape). Lower the thread count — \(lowerThreads) — or raise "
                + "RLIMIT_NPROC (`ulimit -u`, LimitNPROC= in a systemd unit)"
        case .cgroupPids:
            return "the cgroup's thread limit: pids.max is \(limits.cgroupPidsMax ?? 0) and its processes have "
                + "\(limits.cgroupPids ?? 0) threads; \(shape). \(capitalised(lowerThreads)), or raise the limit "
                + "(docker --pids-limit, TasksMax= in a systemd unit)"
        case .systemThreads:
            return "the system's thread limit: kernel.threads-max is \(limits.systemThreadsMax ?? 0) and "
                + "\(limits.systemThreads ?? 0) threads exist; \(shape). \(capitalised(lowerThreads)), or raise it as "
                + "root (`sysctl -w kernel.threads-max=N`)"
        case .unknownShortage:
            func text(_ value: Int?) -> String { value.map { "\($0)" } ?? "unlimited" }
            return "pthread_create's \(errno.name) means either the thread limit or memory for a stack, and no limit "
                + "shows as reached (RLIMIT_NPROC \(text(limits.userThreads)), RLIMIT_AS "
                + "\(text(limits.addressSpaceBytes)), kernel.threads-max \(text(limits.systemThreadsMax)), cgroup "
                + "pids.max \(text(limits.cgroupPidsMax))); \(shape), and \(stackNeed). \(capitalised(lowerThreads)) "
                + "or \(stackKey), or check the container's limits and free memory"
        case .stackSize:
            return "pthread_create refused the stack size \(stackKey) (EINVAL); use a multiple of the page size, "
                + "65536 or more"
        case .other:
            return "pthread_create failed with \(errno.name) (errno \(errno.rawValue)); \(shape)"
        }
    }

    private func capitalised(_ text: String) -> String {
        guard let first = text.utf8.first, first >= 97 && first <= 122 else { return text }
        return String(decoding: [first - 32] + Array(text.utf8.dropFirst()), as: UTF8.self)
    }
}
