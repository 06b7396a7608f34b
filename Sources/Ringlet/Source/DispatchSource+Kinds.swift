import Synchronization

extension DispatchSource {
    /// Events of a process source. Linux tells only `.exit` (through a pidfd);
    /// `.fork`, `.exec` and `.signal` would need the proc connector (CAP_NET_ADMIN) or
    /// ptrace, so Ringlet accepts them in a mask but never delivers them, and warns once.
    public struct ProcessEvent: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        public static let exit = ProcessEvent(rawValue: 0x8000_0000)
        public static let fork = ProcessEvent(rawValue: 0x4000_0000)
        public static let exec = ProcessEvent(rawValue: 0x2000_0000)
        public static let signal = ProcessEvent(rawValue: 0x0800_0000)
        public static let all: ProcessEvent = [.exit, .fork, .exec, .signal]
    }

    /// Events of a file-system object source, as far as inotify tells them:
    /// `.write` (modified), `.extend` (modified and grown), `.attrib` (metadata),
    /// `.link` (link count changed), `.delete` (last link removed, or the inode gone),
    /// `.rename` (moved), `.revoke` (its file system unmounted). `.funlock` never comes.
    public struct FileSystemEvent: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        public static let delete = FileSystemEvent(rawValue: 0x1)
        public static let write = FileSystemEvent(rawValue: 0x2)
        public static let extend = FileSystemEvent(rawValue: 0x4)
        public static let attrib = FileSystemEvent(rawValue: 0x8)
        public static let link = FileSystemEvent(rawValue: 0x10)
        public static let rename = FileSystemEvent(rawValue: 0x20)
        public static let revoke = FileSystemEvent(rawValue: 0x40)
        public static let funlock = FileSystemEvent(rawValue: 0x100)
        public static let all: FileSystemEvent = [.delete, .write, .extend, .attrib, .link, .rename, .revoke, .funlock]
    }

    /// Timer flags: `.strict` timers keep exactly the leeway asked for (never widened
    /// to coalesce with others).
    public struct TimerFlags: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        public static let strict = TimerFlags(rawValue: 1)
    }

    // MARK: Factories

    public class func makeTimerSource(flags: TimerFlags = [], queue: DispatchQueue? = nil) -> DispatchSourceTimer {
        DispatchSource(kind: .timer(strict: flags.contains(.strict)), queue: queue)
    }

    public class func makeUserDataAddSource(queue: DispatchQueue? = nil) -> DispatchSourceUserDataAdd {
        DispatchSource(kind: .dataAdd, queue: queue)
    }

    public class func makeUserDataOrSource(queue: DispatchQueue? = nil) -> DispatchSourceUserDataOr {
        DispatchSource(kind: .dataOr, queue: queue)
    }

    public class func makeUserDataReplaceSource(queue: DispatchQueue? = nil) -> DispatchSourceUserDataReplace {
        DispatchSource(kind: .dataReplace, queue: queue)
    }

    /// Traps when `fileDescriptor` is not open: the message names it and the queue.
    public class func makeReadSource(fileDescriptor: Int32, queue: DispatchQueue? = nil) -> DispatchSourceRead {
        checkDescriptor(fileDescriptor, "makeReadSource", queue)
        return DispatchSource(kind: .read(fileDescriptor), queue: queue).usingKernelSources()
    }

    /// Traps when `fileDescriptor` is not open: the message names it and the queue.
    public class func makeWriteSource(fileDescriptor: Int32, queue: DispatchQueue? = nil) -> DispatchSourceWrite {
        checkDescriptor(fileDescriptor, "makeWriteSource", queue)
        return DispatchSource(kind: .write(fileDescriptor), queue: queue).usingKernelSources()
    }

    /// Several sources may watch one signal. While a source watches it, Ringlet's
    /// handler stands in front of the program's own (which still runs) and the
    /// signal's default action (such as ending the process) no longer happens.
    /// Traps for SIGKILL, SIGSTOP, glibc's own signals (32 and 33, below SIGRTMIN)
    /// and numbers out of range.
    public class func makeSignalSource(signal: Int32, queue: DispatchQueue? = nil) -> DispatchSourceSignal {
        let call = "makeSignalSource(signal: \(signal)) for queue '\(queue?.label ?? "global")': "
        switch SignalCalls.kind(of: signal) {
        case .catchable:
            break
        case .uncatchable:
            ringletMisuse(call + "signal \(signal) is SIG\(signal == 9 ? "KILL" : "STOP"), which no process can catch "
                + "or watch (the kernel acts on it without running a handler); watch another signal")
        case .reservedByTheCLibrary:
            let first = SignalCalls.realtimeMinimum
            ringletMisuse(call + "signal \(signal) is reserved by glibc for its threads (thread cancellation and "
                + "set*id calls; its sigaction refuses it with EINVAL); use SIGRTMIN (\(first)) or a later real-time "
                + "signal, up to SIGRTMAX (\(SignalCalls.limit - 1))")
        case .outOfRange:
            ringletMisuse(call + "\(signal) is not a signal number: Linux signals are 1...\(SignalCalls.limit - 1) "
                + "(SIGHUP is 1, SIGRTMIN \(SignalCalls.realtimeMinimum), SIGRTMAX \(SignalCalls.limit - 1))")
        }
        return DispatchSource(kind: .signal(signal), queue: queue).usingKernelSources()
    }

    /// `.exit` is delivered when the process ends (through a pidfd, Linux 5.3+).
    /// Traps for an identifier that is not a process id (0 or negative: those name
    /// process groups in kill(2), and pidfd_open takes one process).
    public class func makeProcessSource(identifier: Int32, eventMask: ProcessEvent,
                                        queue: DispatchQueue? = nil) -> DispatchSourceProcess {
        if identifier <= 0 {
            ringletMisuse("makeProcessSource(identifier: \(identifier)) for queue '\(queue?.label ?? "global")': "
                + "\(identifier) is not a process id (0 means the caller's process group and a negative number a "
                + "group in kill(2)); pass the pid of one process, greater than 0, such as a child's pid from fork "
                + "or posix_spawn")
        }
        if !eventMask.subtracting(.exit).isEmpty {
            warnOnce("process source for pid \(identifier): only .exit can be delivered on "
                + "Linux; .fork, .exec and .signal in the mask will never come")
        }
        return DispatchSource(kind: .process(identifier, eventMask), queue: queue).usingKernelSources()
    }

    /// Traps when `fileDescriptor` is not open: the message names it and the queue.
    public class func makeFileSystemObjectSource(fileDescriptor: Int32, eventMask: FileSystemEvent,
                                                 queue: DispatchQueue? = nil) -> DispatchSourceFileSystemObject {
        checkDescriptor(fileDescriptor, "makeFileSystemObjectSource", queue)
        return DispatchSource(kind: .fileSystem(fileDescriptor, eventMask), queue: queue).usingKernelSources()
    }

    /// A PSI trigger's descriptor watched for POLLPRI, owned by the source (closed when
    /// it is let go): MemoryPressureWatch's, activated by it.
    static func makePressureTrigger(fileDescriptor: Int32, queue: DispatchQueue) -> DispatchSource {
        DispatchSource(kind: .pressureTrigger(fileDescriptor), queue: queue).usingKernelSources()
    }

    /// Read, write, signal, process, file-system and memory-pressure sources: the manager's code for
    /// their kernel side is installed (and linked) only through here.
    func usingKernelSources() -> DispatchSource {
        manager.useKernelSources()
        return self
    }

    private static func checkDescriptor(_ fd: Int32, _ call: String, _ queue: DispatchQueue?) {
        if !Descriptors.isOpen(fd) {
            ringletMisuse("\(call)(fileDescriptor: \(fd)) for queue '\(queue?.label ?? "global")': fd \(fd) is "
                + "not an open descriptor; open it first and close it only in the source's cancel handler")
        }
    }
}

private let warnedProcessEvents = Atomic<Bool>(false)

private func warnOnce(_ message: String) {
    if warnedProcessEvents.exchange(true, ordering: .relaxed) { return }
    ringletWarning(message)
}
