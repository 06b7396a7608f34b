/// Forces chosen calls at the syscall boundary to fail, so tests can show that every
/// fault is retried or reported without a kernel that misbehaves on cue (after
/// swift-system's mocking hook). Compiled into debug builds only: in release and
/// Embedded builds `take` is a constant nil the optimiser removes.
enum SyscallFaults {
    /// The calls that can be made to fail.
    enum Call: Equatable {
        case ringSetup
        case ringSubmit
        case eventfdCreate
        /// Preparing a request finds the submission queue full (EBUSY).
        case ringPrepare
        /// The kernel answers a poll or timeout request at once with the error.
        case requestCompletion
        /// A worker's wake queued on the ring (`Ring.prepareFutexWake`): EBUSY finds the
        /// submission queue full (thrown); another error is the kernel's answer.
        case workerWake
        /// open(2) of a DispatchIO path (`Descriptors.open`).
        case open
        /// fstat(2) (`Descriptors.status`, `Descriptors.identity`).
        case fstat
        /// A poll(2) with no wait (`Descriptors.readyEvents`).
        case pollNow
        /// FIONREAD and the free space of a pipe or socket (`Descriptors.readableBytes`,
        /// `writableBytes`).
        case byteCount
        /// lseek(2) (`Descriptors.position`, `Descriptors.seek`).
        case seek
        /// pidfd_open(2) (`KernelWatches.processExit`).
        case pidfdOpen
        /// inotify_init1(2) / inotify_add_watch(2) (`KernelWatches.fileChanges`).
        case inotifyWatch
        /// Reading an inotify descriptor (`KernelWatches.takeFileChanges`).
        case inotifyRead
        /// The wall-clock watch's timerfd (`KernelWatches.clockChanges`).
        case timerfd
        /// signalfd(2) (`SignalCalls.updateSignalFD`).
        case signalfd
        /// Reading a signalfd (`SignalCalls.takeFromSignalFD`).
        case signalfdRead
        /// sigaction(2) (`SignalCalls.install`).
        case sigaction
        /// malloc(3) of a pool (`Memory.reserve`).
        case reserveMemory
        /// epoll_create1(2) of the epoll backend (`EpollCalls.create`).
        case epollCreate
        /// epoll_ctl(2) (`EpollCalls.control`).
        case epollControl
        /// epoll_wait(2) (`EpollCalls.wait`).
        case epollWait
        /// The epoll backend's timeout timerfd (`EpollCalls.makeTimeoutTimer`, `armTimeout`).
        case timeoutTimer
        /// A read or write that must not block (`EpollCalls.transferNow`).
        case transferNow
        /// A blocking read or write on an I/O helper thread (`EpollCalls.transferBlocking`).
        case transferBlocking
    }

    #if DEBUG
    private static let lock = FutexLock()
    nonisolated(unsafe) private static var pending: [(thread: Int32, call: Call, errno: Errno)] = []

    /// Injected with this thread, a fault hits the next such call of any thread: for a
    /// thread that does not exist yet (the manager's ring setup, in a child process).
    static let anyThread: Int32 = 0

    /// The next `count` calls of `call` made by `thread` (the calling thread by
    /// default; the manager's for ring faults) fail with `errno`. Other threads, such
    /// as tests running in parallel, are not affected.
    static func inject(_ call: Call, _ errno: Errno, count: Int = 1, thread: Int32 = ThreadControl.threadID) {
        lock.withLock { for _ in 0..<count { pending.append((thread, call, errno)) } }
    }

    /// Forgets every fault injected for `thread` (the calling thread by default).
    static func reset(thread: Int32 = ThreadControl.threadID) {
        lock.withLock { pending.removeAll { $0.thread == thread } }
    }

    /// The fault to return instead of making `call`, if one was injected for it.
    static func take(_ call: Call) -> Errno? {
        lock.withLock { () -> Errno? in
            if pending.isEmpty { return nil }
            let thread = ThreadControl.threadID
            guard let index = pending.firstIndex(where: {
                ($0.thread == thread || $0.thread == anyThread) && $0.call == call
            }) else { return nil }
            return pending.remove(at: index).errno
        }
    }
    #else
    @inline(__always)
    static func take(_ call: Call) -> Errno? { nil }
    #endif
}
