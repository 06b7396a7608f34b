import CRinglet

/// The calls of the epoll backend (Architecture, "The epoll backend"): the epoll set,
/// the timerfd of the one armed timeout, the reads and writes the manager makes without
/// blocking, and the blocking ones of the I/O helper threads. Each consults the fault
/// hook (`SyscallFaults`) first, retries EINTR where it can see it, and throws the errno.
enum EpollCalls {
    /// epoll_ctl(2) operations.
    enum Operation {
        case add, modify, delete

        var code: Int32 {
            switch self {
            case .add: return RL_EPOLL_ADD
            case .modify: return RL_EPOLL_MODIFY
            case .delete: return RL_EPOLL_DELETE
            }
        }
    }

    /// EPOLLET: report a descriptor when it becomes ready, not while it stays ready.
    static let edgeTriggered = RL_EPOLL_EDGE
    /// poll(2) bits the kernel always reports, asked for or not.
    static let errorOrHangUp = RL_POLLERR | RL_POLLHUP

    /// A new epoll set (close-on-exec).
    static func create() throws(Errno) -> Int32 {
        if let injected = SyscallFaults.take(.epollCreate) { throw injected }
        let result = rl_epoll_create()
        if result < 0 { throw Errno(negated: result) }
        return result
    }

    /// Adds, changes or removes `fd` in the set `epfd`; `data` comes back with its events.
    static func control(_ epfd: Int32, _ operation: Operation, fd: Int32, events: UInt32,
                        data: UInt64) throws(Errno) {
        if let injected = SyscallFaults.take(.epollControl) { throw injected }
        let result = rl_epoll_control(epfd, operation.code, fd, events, data)
        if result < 0 { throw Errno(negated: result) }
    }

    /// Waits at most `timeoutMilliseconds` (< 0: without limit) for ready descriptors
    /// and fills `data` and `events` (64 entries); returns how many. EINTR (a signal to
    /// the manager, whose asynchronous signals are blocked: rare) is retried.
    static func wait(_ epfd: Int32, data: UnsafeMutablePointer<UInt64>, events: UnsafeMutablePointer<UInt32>,
                     timeoutMilliseconds: Int32) throws(Errno) -> Int {
        while true {
            let result: Int32
            if let injected = SyscallFaults.take(.epollWait) {
                result = -injected.rawValue
            } else {
                result = rl_epoll_wait(epfd, data, events, 64, timeoutMilliseconds)
            }
            if result >= 0 { return Int(result) }
            let error = Errno(negated: result)
            if error != .interrupted { throw error }
        }
    }

    /// Waits at most `timeoutNanoseconds` (< 0: without limit; epoll_pwait2, or
    /// epoll_wait rounded up to a millisecond where the kernel or a seccomp filter
    /// refuses it) and fills `data` (at most `capacity` ≤ 64 entries); returns how many,
    /// or -errno (EINTR included: a band's watcher loops anyway).
    static func waitForData(_ epfd: Int32, into data: UnsafeMutablePointer<UInt64>, capacity: Int,
                            timeoutNanoseconds: Int64) -> Int32 {
        rl_epoll_wait_data_ns(epfd, data, Int32(capacity), timeoutNanoseconds)
    }

    /// The CLOCK_MONOTONIC timerfd that stands for the one timeout the manager keeps armed.
    static func makeTimeoutTimer() throws(Errno) -> Int32 {
        if let injected = SyscallFaults.take(.timeoutTimer) { throw injected }
        let result = rl_timerfd_create_monotonic()
        if result < 0 { throw Errno(negated: result) }
        return result
    }

    /// Arms the timerfd for `deadline` (CLOCK_MONOTONIC nanoseconds, absolute), or
    /// disarms it (nil).
    static func armTimeout(_ fd: Int32, at deadline: UInt64?) throws(Errno) {
        if let injected = SyscallFaults.take(.timeoutTimer) { throw injected }
        let result = deadline.map { rl_timerfd_set_absolute(fd, $0) } ?? rl_timerfd_disarm(fd)
        if result < 0 { throw Errno(negated: result) }
    }

    /// Reads the timerfd's expiration count, which makes it unready again. EAGAIN (it
    /// had not expired: a late look after a re-arm) needs nothing, so nothing is thrown.
    static func takeExpirations(_ fd: Int32) { _ = rl_eventfd_drain(fd) }

    /// A read or write of `length` bytes at `offset` (nil: the file position) that
    /// never blocks (RWF_NOWAIT). Throws EAGAIN when it would block and EOPNOTSUPP
    /// when the file cannot promise not to (then a helper thread must make it).
    /// EINTR is retried.
    static func transferNow(write: Bool, fd: Int32, buffer: UnsafeMutableRawPointer, length: Int,
                            offset: Int64?) throws(Errno) -> Int {
        while true {
            let result: Int64
            if let injected = SyscallFaults.take(.transferNow) {
                result = Int64(-injected.rawValue)
            } else {
                result = rl_fd_transfer_nowait(write ? 1 : 0, fd, buffer, UInt64(length), offset ?? -1)
            }
            if result >= 0 { return Int(result) }
            let error = Errno(negated: Int32(truncatingIfNeeded: result))
            if error != .interrupted { throw error }
        }
    }

    /// The same transfer, blocking: only I/O helper threads call it. EINTR is retried.
    static func transferBlocking(write: Bool, fd: Int32, buffer: UnsafeMutableRawPointer, length: Int,
                                 offset: Int64?) throws(Errno) -> Int {
        while true {
            let result: Int64
            if let injected = SyscallFaults.take(.transferBlocking) {
                result = Int64(-injected.rawValue)
            } else {
                result = rl_fd_transfer_blocking(write ? 1 : 0, fd, buffer, UInt64(length), offset ?? -1)
            }
            if result >= 0 { return Int(result) }
            let error = Errno(negated: Int32(truncatingIfNeeded: result))
            if error != .interrupted { throw error }
        }
    }

    /// Sets the calling thread's I/O priority (a helper thread, before a request of
    /// another priority). Refusals are ignored: the request goes at the old priority.
    static func setThreadIOPriority(_ ioprio: UInt16) -> Bool {
        rl_thread_set_io_priority(ioprio) == 0
    }
}
