/// The epoll backend's threads for the reads and writes that may block (Architecture,
/// "The epoll backend"): regular files — which no kernel can poll, and whose reads
/// wait for the disk when the page cache misses — and the rare character device that
/// cannot promise RWF_NOWAIT (a terminal). The manager never makes such a call itself.
///
/// Created with the backend when the runtime starts, named `ringlet-ioN` and counted
/// in `RuntimeStatistics.ioThreads` (Architecture, "Fixed at start"). An idle helper
/// sleeps on a futex, so an idle runtime still makes no wake-ups. A result goes back
/// through `finished` and an eventfd in the manager's epoll set, written only for the
/// first result of a batch.
// @unchecked Sendable: `queue`, `head`, `running`, `finished` and `stopping` under `lock`; the rest is immutable.
final class IOHelperThreads: @unchecked Sendable {
    /// One blocking read or write.
    struct Job {
        let userData: UInt64
        let write: Bool
        let fd: Int32
        let buffer: UnsafeMutableRawPointer
        let length: Int
        /// nil: at the file position (read(2), write(2)); else pread(2), pwrite(2).
        let offset: Int64?
        /// The I/O priority of the request (`KernelPriority.ioPriority`), set on the
        /// helper thread before the call when it differs from the last one.
        let ioprio: UInt16
    }

    /// What `cancel` found.
    enum Cancellation {
        /// Still queued: taken out, it will never run.
        case cancelled
        /// A helper is making the call: its result will come.
        case running
        case notFound
    }

    /// Stack of each helper: it runs one C call at a time.
    static let stackBytes = 64 * 1024

    let count: Int
    /// Written when results wait in `finished` (polled in the manager's epoll set).
    let completionFD: EventFD
    private let lock = FutexLock()
    private let work = FutexEvent()
    private var queue: [Job] = []
    private var head = 0
    private var running: [UInt64] = []
    private var finished: [Ring.Completion] = []
    private var stopping = false

    /// Starts `count` helper threads. Throws the step that failed and its errno.
    init(count: Int) throws(EpollSetupError) {
        self.count = count
        do throws(Errno) {
            completionFD = try EventFD()
        } catch {
            lock.deallocate()
            work.deallocate()
            throw EpollSetupError(call: "eventfd", errno: error)
        }
        for index in 0..<count {
            do throws(Errno) {
                try ThreadControl.start(stackBytes: Self.stackBytes) { [self] in threadMain(index) }
            } catch {
                stop()
                throw EpollSetupError(call: "pthread_create of I/O helper thread \(index + 1) of \(count)", errno: error)
            }
        }
    }

    deinit {
        completionFD.close()
        lock.deallocate()
        work.deallocate()
    }

    // MARK: The manager's side

    /// Queues `jobs` and wakes as many helpers as there are jobs.
    func submit(_ jobs: [Job]) {
        if jobs.isEmpty { return }
        lock.withLock { queue.append(contentsOf: jobs) }
        work.post(wake: Int32(Swift.min(jobs.count, count)))
    }

    /// Helpers making a call now.
    var busy: Int { lock.withLock { running.count } }

    /// Takes a queued job out, or says whether a helper is making it.
    func cancel(_ userData: UInt64) -> Cancellation {
        lock.withLock {
            if let index = queue[head...].firstIndex(where: { $0.userData == userData }) {
                queue.remove(at: index)
                return .cancelled
            }
            return running.contains(userData) ? .running : .notFound
        }
    }

    /// The results handed back since the last call (the eventfd is reset first, so a
    /// result added meanwhile writes it again).
    func takeFinished() -> [Ring.Completion] {
        completionFD.drain()
        return lock.withLock {
            let taken = finished
            finished.removeAll(keepingCapacity: true)
            return taken
        }
    }

    /// Lets every helper exit once the queue is empty (a `Ring` of the tests going away).
    func stop() {
        lock.withLock { stopping = true }
        work.post(wake: Int32(count))
    }

    // MARK: The helpers

    private func threadMain(_ index: Int) {
        ThreadControl.setName("ringlet-io\(index)")
        // A write to a pipe whose reader has gone fails with EPIPE instead of ending
        // the process; the signal it raised is taken below.
        SignalCalls.blockPipeSignal()
        var ioprio: UInt16 = 0
        while true {
            let seen = work.snapshot
            guard let job = next() else {
                if lock.withLock({ stopping }) { return }
                _ = work.wait(ifUnchangedFrom: seen)
                continue
            }
            if job.ioprio != ioprio {
                ioprio = job.ioprio
                _ = EpollCalls.setThreadIOPriority(ioprio)
            }
            var result: Int32
            do throws(Errno) {
                result = Int32(try EpollCalls.transferBlocking(write: job.write, fd: job.fd, buffer: job.buffer,
                                                               length: job.length, offset: job.offset))
            } catch {
                if error == .brokenPipe { _ = SignalCalls.takePipeSignal() }
                result = -error.rawValue
            }
            finish(job.userData, result)
        }
    }

    private func next() -> Job? {
        lock.withLock {
            guard head < queue.count else { return nil }
            let job = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            running.append(job.userData)
            return job
        }
    }

    private func finish(_ userData: UInt64, _ result: Int32) {
        let first = lock.withLock { () -> Bool in
            if let index = running.firstIndex(of: userData) { running.remove(at: index) }
            finished.append(Ring.Completion(userData: userData, result: result, flags: 0))
            return finished.count == 1
        }
        if first { completionFD.signal() }
    }
}

/// The epoll backend could not be set up: the call that failed and its errno.
struct EpollSetupError: Error {
    let call: String
    let errno: Errno
}
