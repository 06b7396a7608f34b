
/// The limits that bound what the runtime creates — threads, their stacks, file
/// descriptors — and how close the process and the system are to them, read when
/// something was refused so that the message can say which limit it was, its value
/// and how to raise it (Architecture, "Never silent"). Tests build one by hand.
///
/// nil means "unlimited" for a limit and "unknown" for a count.
public struct ProcessLimits: Sendable, Equatable {
    /// RLIMIT_AS (soft): the process's address space, where thread stacks are mapped.
    public var addressSpaceBytes: Int?
    /// The process's address space now (/proc/self/statm, VmSize).
    public var addressSpaceInUseBytes: Int?
    /// RLIMIT_STACK (soft): glibc's default thread stack (`workerStackBytes` = 0).
    public var stackBytes: Int?
    /// RLIMIT_NPROC (soft): threads of this user, all its processes together.
    public var userThreads: Int?
    /// Threads of this process now.
    public var processThreads: Int?
    /// kernel.threads-max and the threads the system has now (/proc/loadavg).
    public var systemThreadsMax: Int?
    public var systemThreads: Int?
    /// The pids controller of this process's cgroup (v2): pids.max and pids.current
    /// (a container's usual thread cap).
    public var cgroupPidsMax: Int?
    public var cgroupPids: Int?
    /// vm.overcommit_memory (2: strict accounting, stacks count as committed memory).
    public var overcommitMode: Int?
    /// RLIMIT_NOFILE (soft and hard): descriptors this process may have open.
    public var openFiles: Int?
    public var openFilesHard: Int?
    /// fs.file-max and the files the system has open now (fs.file-nr).
    public var systemFilesMax: Int?
    public var systemFiles: Int?

    public init(addressSpaceBytes: Int? = nil, addressSpaceInUseBytes: Int? = nil, stackBytes: Int? = 8 << 20,
                userThreads: Int? = nil, processThreads: Int? = nil, systemThreadsMax: Int? = nil,
                systemThreads: Int? = nil, cgroupPidsMax: Int? = nil, cgroupPids: Int? = nil,
                overcommitMode: Int? = 0, openFiles: Int? = 1024, openFilesHard: Int? = 1_048_576,
                systemFilesMax: Int? = nil, systemFiles: Int? = nil) {
        self.addressSpaceBytes = addressSpaceBytes
        self.addressSpaceInUseBytes = addressSpaceInUseBytes
        self.stackBytes = stackBytes
        self.userThreads = userThreads
        self.processThreads = processThreads
        self.systemThreadsMax = systemThreadsMax
        self.systemThreads = systemThreads
        self.cgroupPidsMax = cgroupPidsMax
        self.cgroupPids = cgroupPids
        self.overcommitMode = overcommitMode
        self.openFiles = openFiles
        self.openFilesHard = openFilesHard
        self.systemFilesMax = systemFilesMax
        self.systemFiles = systemFiles
    }

    /// This process's limits and counts now.
    public static func current() -> ProcessLimits {
        let addressSpace = MachineFiles.resourceLimit(.addressSpace)
        let stack = MachineFiles.resourceLimit(.stack)
        let threads = MachineFiles.resourceLimit(.threads)
        let files = MachineFiles.resourceLimit(.openFiles)
        // loadavg: "0.00 0.01 0.05 2/345 6789": running/total scheduling entities.
        let total = MachineFiles.words(atPath: "/proc/loadavg").flatMap { words -> Int? in
            guard words.count > 3, let slash = words[3].firstIndex(of: 47) else { return nil }
            return MachineFiles.decimal(words[3][(slash + 1)...])
        }
        let fileCounts = MachineFiles.words(atPath: "/proc/sys/fs/file-nr")
        let pidsDirectory = cgroupDirectory().map { "/sys/fs/cgroup" + $0 }
        return ProcessLimits(
            addressSpaceBytes: addressSpace?.soft,
            addressSpaceInUseBytes: MachineFiles.number(atPath: "/proc/self/statm").map { $0 * MachineFiles.pageBytes },
            stackBytes: stack?.soft, userThreads: threads?.soft, processThreads: ThreadControl.processThreadCount,
            systemThreadsMax: MachineFiles.number(atPath: "/proc/sys/kernel/threads-max"), systemThreads: total,
            cgroupPidsMax: pidsDirectory.flatMap { MachineFiles.number(atPath: $0 + "/pids.max") },
            cgroupPids: pidsDirectory.flatMap { MachineFiles.number(atPath: $0 + "/pids.current") },
            overcommitMode: MachineFiles.number(atPath: "/proc/sys/vm/overcommit_memory"),
            openFiles: files?.soft, openFilesHard: files?.hard,
            systemFilesMax: MachineFiles.number(atPath: "/proc/sys/fs/file-max"),
            systemFiles: fileCounts?.first.flatMap { MachineFiles.decimal($0) })
    }

    /// The cgroup v2 path of this process ("/system.slice/x.service"), from its
    /// "0::/path" line in /proc/self/cgroup; nil on cgroup v1 or when unreadable.
    private static func cgroupDirectory() -> String? {
        guard let bytes = try? MachineFiles.read(path: "/proc/self/cgroup", limit: 16384) else { return nil }
        for line in bytes.split(separator: 10) where line.starts(with: "0::".utf8) {
            let path = line.dropFirst(3)
            return path.count <= 1 ? "" : String(decoding: path, as: UTF8.self)
        }
        return nil
    }

    // MARK: Open files

    /// For EMFILE and ENFILE, which open-files limit was reached, its value, and how
    /// to raise it; nil for any other errno.
    public func openFilesAdvice(for errno: Errno) -> String? {
        if errno == .tooManyOpenFiles {
            let soft = openFiles.map { "\($0)" } ?? "unknown"
            let hard = openFilesHard.map { "\($0)" } ?? "unlimited"
            return "the process has reached its open-files limit (RLIMIT_NOFILE: \(soft) descriptors, hard limit "
                + "\(hard)); close descriptors it no longer needs, or raise the limit (`ulimit -n`, LimitNOFILE= "
                + "in a systemd unit, or setrlimit(RLIMIT_NOFILE) up to the hard limit)"
        }
        if errno == .tooManyOpenFilesInSystem {
            let maximum = systemFilesMax.map { "\($0)" } ?? "unknown"
            let open = systemFiles.map { ", \($0) open now" } ?? ""
            return "the system has reached its limit on open files (fs.file-max: \(maximum)\(open)); raise it as "
                + "root (`sysctl -w fs.file-max=N`, and in /etc/sysctl.d) or find the process holding many files"
        }
        return nil
    }
}
