import CRinglet

/// The pollable descriptors the manager opens to watch the kernel: a pidfd for a
/// process source, an inotify instance for a file-system source, and a
/// CLOCK_REALTIME timerfd that becomes readable when someone sets the wall clock.
/// Each consults the fault hook (`SyscallFaults`) first and throws the errno.
enum KernelWatches {
    /// pidfd_open(2): a descriptor that becomes readable when `pid` exits. ESRCH: no
    /// such process; ENOSYS: a kernel before 5.3.
    static func processExit(_ pid: Int32) throws(Errno) -> Int32 {
        if let injected = SyscallFaults.take(.pidfdOpen) { throw injected }
        let result = rl_pidfd_open(pid)
        if result < 0 { throw Errno(negated: result) }
        return result
    }

    /// An inotify instance watching the file open as `fd`: its descriptor and the
    /// IN_* mask watched.
    static func fileChanges(of fd: Int32) throws(Errno) -> (fd: Int32, mask: UInt32) {
        if let injected = SyscallFaults.take(.inotifyWatch) { throw injected }
        var mask: UInt32 = 0
        let result = rl_inotify_watch_fd(fd, &mask)
        if result < 0 { throw Errno(negated: result) }
        return (result, mask)
    }

    /// Every pending inotify event of `inotify`: the OR of their IN_* masks (0: none).
    static func takeFileChanges(_ inotify: Int32) throws(Errno) -> UInt32 {
        if let injected = SyscallFaults.take(.inotifyRead) { throw injected }
        let result = rl_inotify_take(inotify)
        if result < 0 { throw Errno(negated: Int32(truncatingIfNeeded: result)) }
        return UInt32(truncatingIfNeeded: result)
    }

    /// Creates (`fd` nil) or re-arms the wall-clock watch: a timerfd that becomes
    /// readable when the clock is set (TFD_TIMER_CANCEL_ON_SET). Its descriptor.
    static func clockChanges(rearming fd: Int32? = nil) throws(Errno) -> Int32 {
        if let injected = SyscallFaults.take(.timerfd) { throw injected }
        let result = rl_clock_change_watch(fd ?? -1)
        if result < 0 { throw Errno(negated: result) }
        return result
    }

    /// inotify(7) event bits `takeFileChanges` returns.
    static let modified = RL_IN_MODIFY
    static let attributesChanged = RL_IN_ATTRIB
    static let deleted = RL_IN_DELETE_SELF
    static let moved = RL_IN_MOVE_SELF
    static let unmounted = RL_IN_UNMOUNT
}
