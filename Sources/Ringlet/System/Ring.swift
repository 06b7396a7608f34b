import CRinglet

/// The manager's kernel queue, created by the thread that will own it and used by that
/// thread only (the manager: Architecture, "One manager thread owns the io_uring").
/// Submission helpers queue requests; `submitAndWait` hands them to the kernel; each
/// request ends in a `Completion` carrying its user data.
///
/// Two backends behind one type (Architecture, "The epoll backend"): an io_uring
/// (`rl_ring_*`), or, where the kernel or a container refuses io_uring, `EpollQueue`,
/// which carries out the same requests with epoll, a timerfd, RWF_NOWAIT reads and
/// writes and I/O helper threads, and answers them with the same completions. The
/// manager, its timers and sources and DispatchIO's engine never know which runs.
final class Ring {
    /// A completion: the `userData` of the request and its result (>= 0, or -errno).
    struct Completion: Equatable {
        let userData: UInt64
        let result: Int32
        let flags: UInt32

        /// IORING_CQE_F_MORE: a multishot request will post more completions.
        var hasMore: Bool { flags & RL_CQE_F_MORE != 0 }
    }

    /// The io_uring (nil on the epoll backend).
    private let handle: OpaquePointer?
    /// The epoll backend (nil on io_uring).
    private let epoll: EpollQueue?
    /// For requests prepared in other files (Net/SocketCall.swift).
    var ringHandle: OpaquePointer? { handle }
    var epollQueue: EpollQueue? { epoll }
    /// Completions made up by injected faults (debug builds), handed out first.
    private var synthetic: [Completion] = []
    /// The setup flags the kernel accepted (`RL_RING_*`; 0 on epoll).
    let setupFlags: UInt32
    /// IORING_FEAT_* bits reported by io_uring_setup(2) (0 on epoll).
    let features: UInt32
    /// The kernel takes futex wakes as requests (IORING_OP_FUTEX_WAKE, Linux 6.7; false
    /// on epoll): `prepareFutexWake`.
    let wakesFutexes: Bool

    /// Creates an io_uring; the completion queue is at least 4× the submission queue.
    /// Throws `RingUnavailable`, which names the cause and the fix.
    init(submissionEntries: UInt32, completionEntries: UInt32) throws(RingUnavailable) {
        if let injected = SyscallFaults.take(.ringSetup) {
            throw RingUnavailable(errno: injected, ioUringDisabled: RingUnavailable.readDisabledSysctl())
        }
        var flags: UInt32 = 0, features: UInt32 = 0, error: Int32 = 0
        guard let ring = rl_ring_create(submissionEntries, max(completionEntries, 4 * submissionEntries),
                                        &flags, &features, &error) else {
            throw RingUnavailable(errno: Errno(negated: error), ioUringDisabled: RingUnavailable.readDisabledSysctl())
        }
        if let missing = rl_ring_missing_opcode(ring) {
            rl_ring_destroy(ring)
            throw RingUnavailable(errno: .invalidArgument, ioUringDisabled: nil,
                                  missingOpcode: String(cString: missing))
        }
        handle = ring
        epoll = nil
        setupFlags = flags
        self.features = features
        wakesFutexes = rl_ring_supports_futex_wake(ring) == 1
    }

    /// Creates the epoll backend with `helperThreads` I/O helper threads. Throws the
    /// call that failed and its errno.
    init(epollWithHelperThreads helperThreads: Int) throws(EpollSetupError) {
        handle = nil
        epoll = try EpollQueue(helperThreads: helperThreads)
        setupFlags = 0
        features = 0
        wakesFutexes = false
    }

    deinit {
        if let handle { rl_ring_destroy(handle) }
    }

    /// Which backend this ring is.
    var backend: KernelBackend { epoll == nil ? .ioUring : .epoll }

    /// The epoll backend's I/O helper threads (0 on io_uring).
    var helperThreads: Int { epoll?.helpers.count ?? 0 }

    /// Whether the kernel took SINGLE_ISSUER|DEFER_TASKRUN, COOP_TASKRUN, or neither.
    var setupDescription: String {
        if epoll != nil { return "epoll" }
        if setupFlags & UInt32(RL_RING_DEFER_TASKRUN) != 0 { return "SINGLE_ISSUER|DEFER_TASKRUN" }
        if setupFlags & UInt32(RL_RING_COOP_TASKRUN) != 0 { return "COOP_TASKRUN" }
        return "no setup flags"
    }

    /// Queues a timeout completing at `deadline` (CLOCK_MONOTONIC nanoseconds).
    func prepareTimeout(deadline: UInt64, userData: UInt64) throws(Errno) {
        if try injected(userData) { return }
        if let epoll { return epoll.queue(.timeout(deadline: deadline, userData: userData)) }
        let r = rl_ring_prep_timeout(handle, deadline, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues the removal of the timeout whose user data is `target`.
    func prepareTimeoutRemove(target: UInt64, userData: UInt64) throws(Errno) {
        if let epoll { return epoll.queue(.timeoutRemove(target: target, userData: userData)) }
        let r = rl_ring_prep_timeout_remove(handle, target, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues a read into `buffer`, which must stay valid until the completion.
    func prepareRead(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: UInt64,
                     userData: UInt64) throws(Errno) {
        if let epoll {
            return epoll.queue(.transfer(EpollQueue.Transfer(
                userData: userData, write: false, fd: fd, buffer: buffer.baseAddress.unsafelyUnwrapped,
                length: buffer.count, offset: Int64(bitPattern: offset), ioprio: 0)))
        }
        let r = rl_ring_prep_read(handle, fd, buffer.baseAddress, UInt32(buffer.count), offset, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues a read or write of `length` bytes at `buffer` (valid until the
    /// completion). `offset` nil: the file position (pipes, sockets). `ioprio` is the
    /// request's I/O priority (`KernelPriority.ioPriority`).
    func prepareTransfer(write: Bool, fd: Int32, buffer: UnsafeMutableRawPointer, length: Int, offset: Int64?,
                         ioprio: UInt16, userData: UInt64) throws(Errno) {
        if try injected(userData) { return }
        if let epoll {
            return epoll.queue(.transfer(EpollQueue.Transfer(userData: userData, write: write, fd: fd, buffer: buffer,
                                                             length: length, offset: offset, ioprio: ioprio)))
        }
        let at = offset.map { UInt64(bitPattern: $0) } ?? UInt64.max
        let r = rl_ring_prep_rw(handle, write ? 1 : 0, fd, buffer, UInt32(length), at, ioprio, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues the cancellation of the request whose user data is `target`.
    func prepareCancel(target: UInt64, userData: UInt64) throws(Errno) {
        if let epoll { return epoll.queue(.cancel(target: target, userData: userData)) }
        let r = rl_ring_prep_cancel(handle, target, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues a one-shot readiness poll (POLLIN) of `fd`: the completion comes when
    /// `fd` has data. Portable to 5.x kernels, unlike a read of a non-blocking fd.
    func preparePollIn(fd: Int32, userData: UInt64) throws(Errno) {
        if let epoll {
            return epoll.queue(.poll(fd: fd, events: Descriptors.readable, multishot: false, userData: userData))
        }
        let r = rl_ring_prep_poll_in(handle, fd, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues a readiness poll of `fd` for `events` (RL_POLLIN, RL_POLLOUT); with
    /// `multishot` it stays armed and every completion but the last has IORING_CQE_F_MORE.
    func preparePoll(fd: Int32, events: UInt32, multishot: Bool, userData: UInt64) throws(Errno) {
        if try injected(userData) { return }
        if let epoll { return epoll.queue(.poll(fd: fd, events: events, multishot: multishot, userData: userData)) }
        let r = rl_ring_prep_poll(handle, fd, events, multishot ? 1 : 0, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues a wake of one thread sleeping on the futex `word`, carried out when the
    /// queue is next submitted: in the same io_uring_enter as the owner's wait, so a
    /// woken thread that the kernel puts on the owner's CPU does not preempt the owner
    /// before it sleeps. Only when `wakesFutexes`. It completes only if it failed.
    func prepareFutexWake(word: UnsafeMutablePointer<UInt32>, userData: UInt64) throws(Errno) {
        if let fault = SyscallFaults.take(.workerWake) {
            if fault == .busy { throw fault }
            synthetic.append(Completion(userData: userData, result: -fault.rawValue, flags: 0))
            return
        }
        let r = rl_ring_prep_futex_wake(handle, word, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Queues the removal of the poll whose user data is `target`.
    func preparePollRemove(target: UInt64, userData: UInt64) throws(Errno) {
        if let epoll { return epoll.queue(.pollRemove(target: target, userData: userData)) }
        let r = rl_ring_prep_poll_remove(handle, target, userData)
        if r < 0 { throw Errno(negated: r) }
    }

    /// Submits what is queued and sleeps until `waitFor` completions are there, or
    /// a signal ends the wait after something was submitted (io_uring_enter then
    /// returns the submission's count, not EINTR: the caller looks for completions
    /// and waits again). EINTR before any submission is retried; EBUSY/EAGAIN
    /// (completions to reap first) and other errors are thrown for the owner to handle.
    func submitAndWait(waitFor count: UInt32) throws(Errno) -> Int {
        // A made-up completion is already waiting, as the kernel's would be.
        let count = synthetic.isEmpty ? count : 0
        while true {
            let r: Int32
            if let injected = SyscallFaults.take(.ringSubmit) {
                r = -injected.rawValue
            } else if let epoll {
                return try epoll.submitAndWait(waitFor: count)
            } else {
                r = rl_ring_submit_and_wait(handle, count)
            }
            if r >= 0 { return Int(r) }
            let error = Errno(negated: r)
            if error == .interrupted { continue }
            throw error
        }
    }

    /// Injected faults: a full submission queue (thrown), or a request the kernel
    /// answers at once with an error (a made-up completion; true: nothing to queue).
    func injected(_ userData: UInt64) throws(Errno) -> Bool {
        if let full = SyscallFaults.take(.ringPrepare) { throw full }
        guard let failure = SyscallFaults.take(.requestCompletion) else { return false }
        synthetic.append(Completion(userData: userData, result: -failure.rawValue, flags: 0))
        return true
    }

    /// Takes the next completion, or nil when none is waiting.
    func nextCompletion() -> Completion? {
        if !synthetic.isEmpty { return synthetic.removeFirst() }
        if let epoll { return epoll.nextCompletion() }
        var userData: UInt64 = 0, result: Int32 = 0, flags: UInt32 = 0
        guard rl_ring_next_completion(handle, &userData, &result, &flags) == 1 else { return nil }
        return Completion(userData: userData, result: result, flags: flags)
    }

    /// Completions the kernel had to drop (only on kernels without IORING_FEAT_NODROP).
    var droppedCompletions: UInt32 { handle.map { rl_ring_overflow_count($0) } ?? 0 }
}

/// An eventfd other threads signal to wake the ring's owner (which keeps a read of
/// it armed on the ring).
struct EventFD {
    let fd: Int32

    init() throws(Errno) {
        if let injected = SyscallFaults.take(.eventfdCreate) { throw injected }
        let r = rl_eventfd_create()
        if r < 0 { throw Errno(negated: r) }
        fd = r
    }

    /// Adds 1 (a pending wake-up is kept, never lost). EBADF is a bug in Ringlet.
    func signal() {
        let r = rl_eventfd_signal(fd)
        if r < 0 { ringletBug("eventfd \(fd) refused a wake-up: \(Errno(negated: r).name)") }
    }

    /// Takes every pending wake-up (the counter goes back to 0).
    func drain() { _ = rl_eventfd_drain(fd) }

    func close() { rl_close(fd) }
}
