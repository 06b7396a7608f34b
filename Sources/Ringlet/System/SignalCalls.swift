import CRinglet

/// The signal calls behind signal sources and DispatchIO's writes: Ringlet's handler
/// (it counts a signal and wakes the manager, then calls the program's own), the
/// signalfd for signals every thread blocks, what a signal number is, and SIGPIPE
/// on the manager thread. Each consults the fault hook (`SyscallFaults`) where the
/// system can refuse it.
enum SignalCalls {
    /// What a signal number is to a signal source.
    enum Kind {
        case catchable
        /// SIGKILL or SIGSTOP: the kernel acts on them without any handler.
        case uncatchable
        /// 32 and 33: glibc's own, below SIGRTMIN.
        case reservedByTheCLibrary
        case outOfRange
    }

    static func kind(of signo: Int32) -> Kind {
        switch rl_signal_class(signo) {
        case RL_SIGNAL_CATCHABLE: return .catchable
        case RL_SIGNAL_UNCATCHABLE: return .uncatchable
        case RL_SIGNAL_LIBC_RESERVED: return .reservedByTheCLibrary
        default: return .outOfRange
        }
    }

    /// SIGRTMIN as the C library defines it at run time (34 with glibc).
    static var realtimeMinimum: Int32 { rl_signal_realtime_min() }

    /// The eventfd Ringlet's handler writes to wake the manager.
    static func setWakeDescriptor(_ fd: Int32) { rl_signal_set_wake_fd(fd) }

    /// Puts Ringlet's handler in front of the program's for `signo` (sigaction(2)).
    static func install(_ signo: Int32) throws(Errno) {
        if let injected = SyscallFaults.take(.sigaction) { throw injected }
        let result = rl_signal_install(signo)
        if result < 0 { throw Errno(negated: result) }
    }

    /// Puts the program's handler back (unless it replaced Ringlet's since).
    static func uninstall(_ signo: Int32) { _ = rl_signal_uninstall(signo) }

    /// Signals of `signo` Ringlet's handler caught since the last call.
    static func takeCaught(_ signo: Int32) -> UInt32 { rl_signal_take_caught(signo) }

    /// Creates (`fd` < 0) or updates the signalfd for the signals `watched` marks
    /// (one byte per signal number); its descriptor.
    static func updateSignalFD(_ fd: Int32, watching watched: [UInt8]) throws(Errno) -> Int32 {
        if let injected = SyscallFaults.take(.signalfd) { throw injected }
        let result = watched.withUnsafeBufferPointer { rl_signalfd_update(fd, $0.baseAddress) }
        if result < 0 { throw Errno(negated: result) }
        return result
    }

    /// Reads every pending signal from the signalfd into `counts` (indexed by signal
    /// number) and calls the program's previous handler for each.
    static func takeFromSignalFD(_ fd: Int32, into counts: inout [UInt32]) throws(Errno) {
        if let injected = SyscallFaults.take(.signalfdRead) { throw injected }
        let result = counts.withUnsafeMutableBufferPointer { rl_signalfd_take(fd, $0.baseAddress) }
        if result < 0 { throw Errno(negated: result) }
    }

    /// Blocks SIGPIPE in the calling thread (the manager, before its first write), so
    /// a write to a pipe or socket without a reader fails with EPIPE.
    static func blockPipeSignal() { _ = rl_thread_block_pipe_signal() }

    /// Takes a SIGPIPE pending for the calling thread; true when there was one.
    static func takePipeSignal() -> Bool { rl_thread_take_pipe_signal() == 1 }
}

extension SignalCalls {
    /// Signal numbers a source may watch are below this (standard and real-time signals).
    static var limit: Int32 { Int32(RL_SIGNAL_LIMIT) }
}
