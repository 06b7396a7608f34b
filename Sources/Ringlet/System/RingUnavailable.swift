import CRinglet

/// io_uring refused: the errno of io_uring_setup(2) and what the system says about
/// it, turned into the cause and the fix (Architecture, "io_uring for all I/O").
public struct RingUnavailable: Error, CustomStringConvertible {
    public let errno: Errno
    /// /proc/sys/kernel/io_uring_disabled: 0, 1, 2, or nil when the kernel lacks it.
    public let ioUringDisabled: Int?
    /// An operation the manager needs that this kernel's io_uring lacks (probe).
    public let missingOpcode: String?

    /// The process's limits when the ring was refused (open files, for EMFILE/ENFILE).
    public let limits: ProcessLimits

    init(errno: Errno, ioUringDisabled: Int?, missingOpcode: String? = nil, limits: ProcessLimits? = nil) {
        self.errno = errno
        self.ioUringDisabled = ioUringDisabled
        self.missingOpcode = missingOpcode
        let opensAFile = errno == .tooManyOpenFiles || errno == .tooManyOpenFilesInSystem
        self.limits = limits ?? (opensAFile ? .current() : ProcessLimits())
    }

    /// What one of 'ringEntries' costs: a 64-byte submission entry and four 16-byte
    /// completions (the completion queue is four times as long), in locked pages.
    static let bytesPerRingEntry = 64 + 4 * 16

    static func readDisabledSysctl() -> Int? {
        let value = rl_uring_disabled_sysctl()
        return value < 0 ? nil : Int(value)
    }

    /// The cause in one clause, for the line the runtime prints when it runs on epoll
    /// instead ("io_uring_setup failed with EPERM: a seccomp filter forbids it").
    public var cause: String {
        if let missingOpcode { return "the kernel's io_uring lacks \(missingOpcode)" }
        let failed = "io_uring_setup failed with \(errno.name)"
        switch errno {
        case .notImplemented:
            return failed + ": this kernel has no io_uring"
        case .notPermitted, .permissionDenied:
            if ioUringDisabled == 2 { return failed + ": the sysctl kernel.io_uring_disabled is 2" }
            if ioUringDisabled == 1 {
                return failed + ": the sysctl kernel.io_uring_disabled is 1 and this user is not in kernel.io_uring_group"
            }
            return failed + ": a seccomp filter forbids it, as a container's default profile does"
        case .noMemory:
            return failed + ": no memory for the ring (RLIMIT_MEMLOCK before Linux 5.12, else the memory cgroup)"
        default:
            return failed
        }
    }

    /// How to get io_uring back, in one clause, for the same line ("allow io_uring_setup,
    /// ... in the container's seccomp profile"); nil when there is nothing to advise.
    public var fix: String? {
        if missingOpcode != nil { return "use Linux 5.10 or later" }
        switch errno {
        case .notImplemented:
            return "use a kernel built with CONFIG_IO_URING (Linux 5.10 or later)"
        case .notPermitted, .permissionDenied:
            if ioUringDisabled == 2 { return "run `sysctl -w kernel.io_uring_disabled=0` as root" }
            if ioUringDisabled == 1 {
                return "add this user to the group in kernel.io_uring_group, or set kernel.io_uring_disabled to 0"
            }
            return "allow io_uring_setup, io_uring_enter and io_uring_register in the container's seccomp profile "
                + "(for example --security-opt seccomp=unconfined)"
        case .noMemory:
            return "raise RLIMIT_MEMLOCK (`ulimit -l`) or lower 'ringEntries'"
        case .tooManyOpenFiles, .tooManyOpenFilesInSystem:
            return "raise the open-file limit (`ulimit -n`)"
        default:
            return nil
        }
    }

    /// What went wrong and how to fix it, in one paragraph.
    public var description: String {
        if let missingOpcode {
            return "io_uring is too old here: the kernel's probe lacks \(missingOpcode), which the manager "
                + "thread needs. Ringlet needs Linux 5.10 or later; use a newer kernel for this board."
        }
        let prefix = "io_uring is not available (io_uring_setup failed with \(errno.name)): "
        switch errno {
        case .notImplemented:
            return prefix + "this kernel has no io_uring (built without CONFIG_IO_URING, or older than 5.1). "
                + "Ringlet needs Linux 5.10 or later with io_uring; use the board's stock kernel or enable it."
        case .notPermitted, .permissionDenied:
            if ioUringDisabled == 2 {
                return prefix + "the sysctl kernel.io_uring_disabled is 2, which forbids io_uring for everyone. "
                    + "Run `sysctl -w kernel.io_uring_disabled=0` as root (and set it in /etc/sysctl.d)."
            }
            if ioUringDisabled == 1 {
                return prefix + "the sysctl kernel.io_uring_disabled is 1, which allows io_uring only to root and "
                    + "the group in kernel.io_uring_group. Add this user to that group, or set the sysctl to 0."
            }
            return prefix + "a seccomp filter forbids io_uring_setup — the default profile of Docker, Podman and "
                + "containerd does. Run the container with a seccomp profile that allows io_uring_setup, "
                + "io_uring_enter and io_uring_register (for example --security-opt seccomp=unconfined)."
        case .noMemory:
            return prefix + "the kernel could not get memory for the ring. Kernels before 5.12 charge it to "
                + "RLIMIT_MEMLOCK: raise it (`ulimit -l`, or LimitMEMLOCK= in the systemd unit); later kernels charge "
                + "the memory cgroup, whose limit (memory.max) may be reached. Or lower 'ringEntries' in the board "
                + "profile: each entry costs \(RingUnavailable.bytesPerRingEntry) bytes (a submission entry and four "
                + "completions), rounded up to whole pages."
        case .invalidArgument:
            return prefix + "the kernel rejected the ring's parameters; lower 'ringEntries' in the board profile "
                + "(the kernel caps it at 32768) or use a newer kernel."
        case .tooManyOpenFiles, .tooManyOpenFilesInSystem:
            let advice = limits.openFilesAdvice(for: errno) ?? ""
            return prefix + "a ring is a file descriptor, and " + advice + "."
        case .badAddress:
            return prefix + "the kernel could not read the ring's parameters (EFAULT), which is a bug in Ringlet; "
                + "please report it with the kernel version (`uname -r`)."
        default:
            return prefix + "io_uring_setup(2) does not document this error; check `dmesg` "
                + "and the kernel's io_uring support."
        }
    }
}
