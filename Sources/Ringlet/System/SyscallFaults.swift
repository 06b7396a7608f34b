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
    }

    #if DEBUG
    private static let lock = FutexLock()
    nonisolated(unsafe) private static var pending: [(thread: Int32, call: Call, errno: Errno)] = []

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
            guard let index = pending.firstIndex(where: { $0.thread == thread && $0.call == call }) else { return nil }
            return pending.remove(at: index).errno
        }
    }
    #else
    @inline(__always)
    static func take(_ call: Call) -> Errno? { nil }
    #endif
}
