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
        /// Writing a PSI trigger (`PressureFiles.trigger`).
        case pressureTrigger
        /// Reading a pressure file's totals (`PressureFiles.totals`).
        case pressureRead
    }

    #if DEBUG
    /// Answers, for each call about to be made, the fault to return instead (the
    /// tests' `SyscallFaults.inject` installs it).
    static let hook = TestHook<Call, Errno?>()

    /// The fault to return instead of making `call`, if one was injected for it.
    static func take(_ call: Call) -> Errno? {
        hook.call(call) ?? nil
    }
    #else
    @inline(__always)
    static func take(_ call: Call) -> Errno? { nil }
    #endif
}
