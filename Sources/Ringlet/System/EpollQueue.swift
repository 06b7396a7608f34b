import CRinglet

/// io_uring's requests emulated on epoll, for a kernel or a container that refuses
/// io_uring (Architecture, "The epoll backend"). `Ring` hands every request here when
/// it runs on this backend, and the completions come back in io_uring's form — user
/// data, result (>= 0 or -errno), IORING_CQE_F_MORE — so the manager, its timers, its
/// sources and DispatchIO's engine do not know which backend runs.
///
/// As on io_uring, requests are queued when prepared and carried out by
/// `submitAndWait`, in order:
/// - **Timeouts**: one CLOCK_MONOTONIC timerfd in the epoll set, armed for the earliest
///   timeout queued (the manager keeps one armed); each completes with -ETIME.
/// - **Polls**: each descriptor is in the epoll set once, edge-triggered, for the
///   union of what its waiters want (EpollQueue+Polls.swift). A multishot poll stays
///   and reports each wake-up, as io_uring's does; a one-shot poll leaves after its
///   first. A descriptor that cannot be polled (a regular file) is ready at once.
/// - **Reads and writes** (EpollQueue+Transfers.swift): made at once with RWF_NOWAIT,
///   on this thread, never blocking; a pipe or socket that is not ready is polled and
///   the transfer made again when it is; a regular file whose bytes are not in the page
///   cache, or a file that cannot promise not to block, goes to an I/O helper thread.
/// - **Socket requests** (EpollQueue+Sockets.swift): accept, connect, recvmsg, sendmsg
///   and shutdown made at once without blocking; one that finds its socket not ready
///   waits for readiness and is made again.
/// - **Cancellation** of a poll, a transfer, a socket request or a timeout, as
///   IORING_OP_ASYNC_CANCEL.
///
/// Manager thread only, but for the helpers' side (IOHelperThreads.swift).
final class EpollQueue {
    /// A read or write request.
    struct Transfer {
        let userData: UInt64
        let write: Bool
        let fd: Int32
        let buffer: UnsafeMutableRawPointer
        let length: Int
        /// nil: at the file position (pipes, sockets); else an explicit offset.
        var offset: Int64?
        let ioprio: UInt16
        /// The file cannot promise RWF_NOWAIT: once ready, a helper thread moves the bytes.
        var needsHelper = false
    }

    /// A request as prepared, carried out by the next `submitAndWait`.
    enum Submission {
        case timeout(deadline: UInt64, userData: UInt64)
        case timeoutRemove(target: UInt64, userData: UInt64)
        case poll(fd: Int32, events: UInt32, multishot: Bool, userData: UInt64)
        case pollRemove(target: UInt64, userData: UInt64)
        case transfer(Transfer)
        case cancel(target: UInt64, userData: UInt64)
        case socket(SocketWork)
    }

    /// Epoll data of the two descriptors of the backend itself (a watched descriptor's
    /// data is its number, below 2^32).
    static let timerToken: UInt64 = 1 << 40
    static let helperToken: UInt64 = 2 << 40

    let epfd: Int32
    /// The timerfd that stands for the earliest timeout queued.
    let timerFD: Int32
    let helpers: IOHelperThreads
    private var submissions: [Submission] = []
    private var completions: [Ring.Completion] = []
    private var completionHead = 0
    /// Watched descriptors, sorted by number (EpollQueue+Polls.swift).
    var watches: [Watch] = []
    /// Descriptors whose waiters changed: removed from the set, or their events
    /// narrowed, before the next wait.
    var changedWatches: [Int32] = []
    /// Timeouts queued, by deadline; the timerfd is set for the first.
    private var timeouts: [(deadline: UInt64, userData: UInt64)] = []
    private var timerSetFor: UInt64?
    /// Blocking transfers for the helpers, handed over before the next wait.
    var helperJobs: [IOHelperThreads.Job] = []
    private let readyData = UnsafeMutablePointer<UInt64>.allocate(capacity: 64)
    private let readyEvents = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)

    /// Sets up the epoll set, the timeout's timerfd and `helperThreads` I/O helpers.
    init(helperThreads: Int) throws(EpollSetupError) {
        var opened: [Int32] = []
        do throws(Errno) {
            epfd = try EpollCalls.create()
            opened.append(epfd)
        } catch {
            readyData.deallocate()
            readyEvents.deallocate()
            throw EpollSetupError(call: "epoll_create1", errno: error)
        }
        do throws(EpollSetupError) {
            do throws(Errno) {
                timerFD = try EpollCalls.makeTimeoutTimer()
                opened.append(timerFD)
                try EpollCalls.control(epfd, .add, fd: timerFD, events: Descriptors.readable, data: Self.timerToken)
            } catch {
                throw EpollSetupError(call: "timerfd_create", errno: error)
            }
            helpers = try IOHelperThreads(count: helperThreads)
            do throws(Errno) {
                try EpollCalls.control(epfd, .add, fd: helpers.completionFD.fd, events: Descriptors.readable,
                                       data: Self.helperToken)
            } catch {
                helpers.stop()
                throw EpollSetupError(call: "epoll_ctl of the helpers' eventfd", errno: error)
            }
        } catch {
            for fd in opened { Descriptors.close(fd) }
            readyData.deallocate()
            readyEvents.deallocate()
            throw error
        }
    }

    deinit {
        helpers.stop()
        Descriptors.close(timerFD)
        Descriptors.close(epfd)
        readyData.deallocate()
        readyEvents.deallocate()
    }

    func queue(_ submission: Submission) { submissions.append(submission) }

    /// Completions waiting to be taken.
    var completionsWaiting: Int { completions.count - completionHead }

    func post(_ userData: UInt64, _ result: Int32, flags: UInt32 = 0) {
        completions.append(Ring.Completion(userData: userData, result: result, flags: flags))
    }

    func nextCompletion() -> Ring.Completion? {
        guard completionHead < completions.count else { return nil }
        let completion = completions[completionHead]
        completionHead += 1
        if completionHead == completions.count {
            completions.removeAll(keepingCapacity: true)
            completionHead = 0
        }
        return completion
    }

    /// Carries out what is queued, then waits for ready descriptors until at least
    /// `count` completions wait (0: only looks). Returns the requests carried out.
    func submitAndWait(waitFor count: UInt32) throws(Errno) -> Int {
        let batch = submissions
        submissions.removeAll(keepingCapacity: true)
        for submission in batch { carryOut(submission) }
        while true {
            settle()
            let block = count > 0 && completionsWaiting == 0
            let ready = try EpollCalls.wait(epfd, data: readyData, events: readyEvents,
                                            timeoutMilliseconds: block ? -1 : 0)
            for index in 0..<ready { handle(readyData[index], readyEvents[index]) }
            if !block || completionsWaiting > 0 { return batch.count }
        }
    }

    private func carryOut(_ submission: Submission) {
        switch submission {
        case .timeout(let deadline, let userData):
            let index = timeouts.firstIndex { $0.deadline > deadline } ?? timeouts.count
            timeouts.insert((deadline, userData), at: index)
        case .timeoutRemove(let target, let userData):
            post(userData, removeTimeout(target) ? 0 : -Errno.noSuchFile.rawValue)
        case .poll(let fd, let events, let multishot, let userData):
            addWaiter(fd: fd, Waiter(userData: userData, events: events, kind: .poll(multishot: multishot)))
        case .pollRemove(let target, let userData):
            post(userData, removeWaiter(target, pollsOnly: true) ? 0 : -Errno.noSuchFile.rawValue)
        case .transfer(let transfer):
            attempt(transfer)
        case .cancel(let target, let userData):
            cancel(target, userData)
        case .socket(let work):
            attempt(work)
        }
    }

    /// Before a wait: the helpers get their jobs, the timerfd the earliest deadline,
    /// and descriptors nobody waits on leave the set (so they cannot wake the manager).
    private func settle() {
        if !helperJobs.isEmpty {
            helpers.submit(helperJobs)
            helperJobs.removeAll(keepingCapacity: true)
        }
        setTimer()
        tidyWatches()
    }

    private func handle(_ data: UInt64, _ events: UInt32) {
        if data == Self.timerToken {
            timerExpired()
        } else if data == Self.helperToken {
            completions.append(contentsOf: helpers.takeFinished())
        } else {
            watchReady(fd: Int32(truncatingIfNeeded: data), events: events)
        }
    }

    // MARK: Timeouts

    /// Takes a queued timeout out; it completes with -ECANCELED.
    func removeTimeout(_ target: UInt64) -> Bool {
        guard let index = timeouts.firstIndex(where: { $0.userData == target }) else { return false }
        timeouts.remove(at: index)
        post(target, -Errno.cancelled.rawValue)
        return true
    }

    /// The timerfd expired: every timeout whose deadline has passed completes with
    /// -ETIME, as io_uring's do. (A timerfd never expires early; a late look finds
    /// more due.)
    private func timerExpired() {
        EpollCalls.takeExpirations(timerFD)
        timerSetFor = nil
        let now = MonotonicClock.nanoseconds
        while let first = timeouts.first, first.deadline <= now {
            timeouts.removeFirst()
            post(first.userData, -Errno.timeExpired.rawValue)
        }
    }

    /// Sets the timerfd for the earliest timeout, or disarms it when none is queued.
    /// A refusal completes that timeout with the error, as io_uring would answer it.
    private func setTimer() {
        while true {
            let next = timeouts.first?.deadline
            if next == timerSetFor { return }
            do throws(Errno) {
                try EpollCalls.armTimeout(timerFD, at: next)
                timerSetFor = next
                return
            } catch {
                guard let first = timeouts.first else { return }
                timeouts.removeFirst()
                post(first.userData, -error.rawValue)
            }
        }
    }
}
