import Synchronization

/// The manager thread: the one owner of the ring and of the timer structure
/// (Architecture: "One manager thread owns the io_uring", "Energy-efficient timers").
/// The ring is an io_uring, or its epoll emulation where io_uring is refused
/// (ManagerThread+Backend.swift; Architecture, "The epoll backend"): this code is the
/// same on both.
///
/// Other threads never touch the ring. They push a request on a lock-free stack and
/// wake the manager through an eventfd whose read stays armed on the ring — and skip
/// even that write while the manager is known to be awake. The manager sleeps in
/// io_uring_enter with, at most, one timeout armed: near the end of the earliest
/// timer window (`TimerQueue.nextAim`). With no timer armed nothing wakes it at all,
/// so an idle runtime makes no wake-ups.
///
///   sleeping --(1) request or timeout completion--> running --(2) nothing left--> sleeping
///
///   (1) ManagerThread.submit / the kernel   (2) ManagerThread.run, after re-arming
// @unchecked Sendable: manager-thread state is touched only by that thread; the rest under `lock` or atomic.
final class ManagerThread: @unchecked Sendable {
    /// A timer's work, run on the manager thread when its window is reached: it
    /// only hands a node to a queue (never runs user code on the manager).
    typealias TimerAction = () -> Void

    /// What other threads ask of the manager.
    enum Request {
        /// Arm a one-shot timer: at `deadline` (window `leeway` wide) push `action`.
        /// With `wall`, `deadline` is wall-clock time and follows changes of the clock.
        case oneShot(deadline: UInt64, leeway: UInt64, wall: Bool, action: TimerAction)
        /// Arm a one-shot timer owned by `target` (ManagerTimerTarget.swift).
        case arm(ManagerTimerTarget, deadline: UInt64, leeway: UInt64)
        /// Arm a source's kernel side (poll, signal, timer).
        case register(DispatchSource)
        /// A timer source's schedule changed.
        case reschedule(DispatchSource)
        /// Disarm a source; its cancel handler runs once nothing can fire any more.
        case cancel(DispatchSource)
        /// A read or write source's handler ran after its poll ended: arm it again.
        case rearmPoll(DispatchSource)
        /// Re-read the wall clock's offset and move wall-clock timers (the clock-change
        /// watch posts this; tests post it after moving the test offset).
        case wallClockChanged
        /// A band whose workers keep timers has none parked, and one of them blocks: the
        /// manager watches that band's windows too (Scheduler+BandTimers.swift).
        case bandTimersUnwatched
        /// Run a closure on the manager thread with its ring. DispatchIO's requests
        /// (start, stop, resume: IOEngine.swift) come this way, so the manager does not
        /// reference the engine's code and a program without channels does not link it.
        case run((Ring) -> Void)
    }

    /// The kind of request a completion answers: the top byte of its user data.
    enum Tag: UInt64 {
        case wake = 1
        case timeout = 2
        case timeoutRemove = 3
        case poll = 4
        case pollRemove = 5
        case signals = 6
        case clockChange = 7
        case io = 8
        case ioPoll = 9
        case ioCancel = 10
        /// A worker's wake queued on the ring (its index in the low bits); completes
        /// only when the kernel refused it (ManagerThread+WorkerWakes.swift).
        case workerWake = 11
        /// Socket requests, the polls of those that waited for readiness, and their
        /// cancellations (Net/SocketEngine.swift).
        case socket = 12
        case socketPoll = 13
        case socketCancel = 14
        /// A poll of a band's descriptor set while the manager watches the band (the
        /// band in the low bits; Source/ManagerThread+BandDescriptors.swift).
        case bandDescriptors = 15
    }

    let configuration: RuntimeConfiguration
    let leewayPolicy: TimerLeewayPolicy
    /// The pool its pushes wake workers of (ManagerThread+WorkerWakes.swift). Held here
    /// rather than reached through `RuntimeParts`, which waits for the runtime to be
    /// published: the manager runs before that.
    let scheduler: Scheduler
    /// The backend asked for (ManagerThread+Backend.swift).
    private let backendRequest: BackendRequest
    /// The backend the ring runs on and why, and its I/O helper threads: set by the
    /// manager before `start` returns, read-only afterwards.
    private(set) var backend: BackendSelection?
    private(set) var helperThreads = 0
    /// DispatchIO's engine (IOEngine.swift), made on first use (see `io`); under `lock`.
    private var ioEngine: IOEngine?
    /// Completions tagged `.io`/`.ioPoll` go here: the engine's `completed`, installed
    /// on the manager thread by the engine's first request. Manager thread only.
    private var ioCompletions: ((Ring.Completion, Ring) -> Void)?
    /// The socket layer's engine (Net/SocketEngine.swift), made on first use; under `lock`.
    private var socketEngine: SocketEngine?
    /// Completions tagged `.socket`/`.socketPoll` go here. Manager thread only.
    private var socketCompletions: ((Ring.Completion, Ring) -> Void)?
    /// The descriptor watch (ManagerThread+DescriptorWatch.swift). Manager thread only.
    var descriptorChecks: [(Ring) -> Bool] = []
    var descriptorWatchArmed = false
    var descriptorWatchTimer: TimerQueue.Handle?
    /// When the manager next looks at the bands' timers and descriptors at the latest
    /// (`.max`: none), and the windows it fired for bands (ManagerThread+BandTimers.swift).
    var bandBackstop: UInt64 = .max
    let bandWindowsFiredByManager = Atomic<Int>(0)
    /// Bands whose descriptor set has a poll on the ring (bit per band), those polls'
    /// completions since start (tests), and where the manager's looks at the sets
    /// leave their events (Source/ManagerThread+BandDescriptors.swift).
    var bandDescriptorPolls: UInt8 = 0
    let bandDescriptorPollsCompleted = Atomic<Int>(0)
    let bandReadyEvents = UnsafeMutablePointer<UInt64>.allocate(capacity: BandDescriptors.eventsPerLook)
    private let requests = RequestStack<Request>()
    let lock = FutexLock()
    /// True while the manager runs (or is about to): producers then skip the eventfd.
    private let awake = Atomic<Bool>(true)
    /// When the manager's current sleep ends at the latest: its armed timeout (max: none),
    /// published before it announces the sleep (`submit(_:neededBy:)`).
    private let sleepAim = Atomic<UInt64>(.max)
    /// Timer requests left for the manager's next wake-up instead of waking it (tests).
    let quietSubmissions = Atomic<Int>(0)
    /// Workers woken from inside the manager's own wait, and those wakes the kernel
    /// refused, which were then made at once (ManagerThread+WorkerWakes.swift).
    let workerWakesInWait = Atomic<Int>(0)
    let workerWakesRefused = Atomic<Int>(0)
    /// Worker wakes queued on the ring and not yet submitted. Manager thread only.
    var workerWakesQueued = false
    /// Whether the manager has announced a sleep, and until when at the latest (tests).
    var announcedSleep: (asleep: Bool, until: UInt64) {
        (!awake.load(ordering: .sequentiallyConsistent), sleepAim.load(ordering: .sequentiallyConsistent))
    }
    private(set) var wakeFD: EventFD?
    /// The manager's kernel thread id (for tests that direct a signal at it).
    private(set) var threadID: Int32 = 0
    // Owned by the manager thread:
    private var ring: Ring?
    var ringForSources: Ring? { ring }
    /// The timers and who owns each (Timers/TimerTable.swift).
    var timers = TimerTable()
    /// The deadline of the one io_uring timeout armed (nil: none), and its generation.
    var armedDeadline: UInt64?
    var timeoutGeneration: UInt64 = 0
    /// The kernel side of non-timer sources, installed by `useKernelSources` (see
    /// ManagerThread+Sources.swift). Manager thread only.
    var kernelSide: KernelSourceSide?
    /// `useKernelSources` posted the installation (under `lock`).
    var kernelSidePosted = false
    /// Sources with a kernel side, by slot (Source/SourceSlots.swift).
    var sourceSlots = SourceSlots()
    var signals = SignalWatch()
    var clockWatchFD: Int32 = -1
    /// Multishot polls work here (cleared on the first EINVAL: kernels before 5.13).
    var multishotPolls = true
    /// Sources whose poll removal was answered EALREADY, asked again after the
    /// manager's next wait (`retryPollRemovals`, ManagerThread+Polls.swift).
    var pollRemovalsOwed: [DispatchSource] = []
    /// Sources activated and not yet cancelled (see `claimSourceCapacity`).
    let activeSources = Atomic<Int>(0)
    /// The manager's trace ring (nil: tracing is off). Manager thread only.
    var trace: TraceBuffer?
    // Statistics, under `lock`:
    private var wakeups = 0
    var armedTimers = 0

    init(configuration: RuntimeConfiguration, backendRequest: BackendRequest, scheduler: Scheduler) {
        self.configuration = configuration
        self.scheduler = scheduler
        self.backendRequest = backendRequest
        leewayPolicy = configuration.leewayPolicy
    }

    /// Runs only when the runtime did not start (the manager's thread keeps it
    /// otherwise): frees the lock word, which is not a Swift-managed value.
    deinit {
        lock.deallocate()
        bandReadyEvents.deallocate()
    }

    /// DispatchIO's engine, made by the first channel (any thread). Only DispatchIO
    /// reaches this, so its code is dropped from programs that make no channel.
    var io: IOEngine {
        lock.withLock {
            if let ioEngine { return ioEngine }
            let engine = IOEngine(configuration: configuration)
            engine.manager = self
            ioEngine = engine
            // Pushed before any request of the engine's, so it is taken first.
            submit(.run { [self] _ in
                ioCompletions = { engine.completed($0, $1) }
                addDescriptorCheck { engine.checkDescriptors($0) }
            })
            return engine
        }
    }

    /// The socket layer's engine, made by the first socket (any thread). Only sockets
    /// reach this, so a program that makes none carries none of it.
    var sockets: SocketEngine {
        lock.withLock {
            if let socketEngine { return socketEngine }
            let engine = SocketEngine(configuration: configuration)
            engine.manager = self
            socketEngine = engine
            // Pushed before any request of the engine's, so it is taken first.
            submit(.run { [self] _ in socketCompletions = { engine.completed($0, $1) } })
            return engine
        }
    }

    /// The socket engine if a socket made it (for statistics and the live dump).
    var socketEngineIfMade: SocketEngine? { lock.withLock { socketEngine } }

    /// DispatchIO's engine if a channel made it (for the live dump).
    var ioEngineIfMade: IOEngine? { lock.withLock { ioEngine } }

    /// Starts the thread and waits until it owns a ring. Throws when no backend can be
    /// set up or the eventfd is refused; the error names the cause and the fix.
    func start() throws(RuntimeError) {
        let outcome = StartOutcome()
        do throws(Errno) {
            try ThreadControl.start(stackBytes: configuration.workerStackBytes) {
                self.threadMain(outcome: outcome)
            }
        } catch {
            throw RuntimeError.threadCreationFailed(created: 0, wanted: 1, errno: error)
        }
        while true {
            let seen = outcome.event.snapshot
            if let result = outcome.result {
                if let failure = result { throw failure }
                return
            }
            _ = outcome.event.wait(ifUnchangedFrom: seen)
        }
    }

    /// Hands a request to the manager (any thread). One compare-and-swap; an eventfd
    /// write only when the manager may be asleep.
    ///
    /// `neededBy`, for a request that arms a timer: the instant the manager would aim at
    /// for that timer (`TimerQueue.aim`). When the manager sleeps until no later than
    /// that, the request waits for that wake-up instead of waking it — a burst of
    /// `Task.sleep`s or `asyncAfter`s costs the manager one wake-up, not one each (it
    /// takes requests before it fires timers).
    ///
    /// Why that is safe: the manager publishes its sleep's end before it announces the
    /// sleep (both sequentially consistent), then looks at the requests once more; a
    /// producer pushes, then reads the announcement and the end. Either the manager sees
    /// the request before it sleeps, or the producer sees the announcement and the end
    /// of that very sleep (or of a later one, which began with taking every request).
    /// Every wake-up takes every request, so nothing waits past `neededBy`.
    func submit(_ request: Request, neededBy: UInt64? = nil) {
        ForkGuard.check("a timer, source or I/O request")
        requests.push(request)
        if let neededBy, !awake.load(ordering: .sequentiallyConsistent),
           sleepAim.load(ordering: .sequentiallyConsistent) <= neededBy {
            quietSubmissions.wrappingAdd(1, ordering: .relaxed)
            return
        }
        if !awake.exchange(true, ordering: .sequentiallyConsistent) {
            wakeFD?.signal()
        }
    }

    /// (wake-ups of the manager since start, timers armed now)
    var counters: (wakeups: Int, armedTimers: Int) { lock.withLock { (wakeups, armedTimers) } }

    // MARK: The manager thread

    private func threadMain(outcome: StartOutcome) {
        ThreadControl.setName("ringlet-m")
        threadID = ThreadControl.threadID
        let context = ThreadContext.install(ThreadContext(worker: nil, lane: "manager", isManager: true))
        trace = context.trace
        do throws(RuntimeError) {
            let (opened, selection) = try openRing(backendRequest)
            ring = opened
            backend = selection
            helperThreads = opened.helperThreads
            do throws(Errno) {
                wakeFD = try EventFD()
                SignalCalls.setWakeDescriptor(wakeFD.unsafelyUnwrapped.fd)
            } catch {
                throw RuntimeError.eventfdUnavailable(error)
            }
        } catch {
            outcome.set(error)
            return
        }
        // Opted in (`dumpSignal`): the dump signal is watched from the start, through
        // `OptionalParts`, so that a program that never sets the key does not carry it.
        if configuration.dumpSignal != 0 { OptionalParts.watchDumpSignal(self, ring.unsafelyUnwrapped) }
        outcome.set(nil)
        run(ring.unsafelyUnwrapped)
    }

    private func run(_ ring: Ring) -> Never {
        armWakeRead(ring)
        while true {
            takeRequests()
            // After a wait: the removals it answered EALREADY can now succeed.
            if !pollRemovalsOwed.isEmpty { kernelSide?.retryPollRemovals(ring) }
            if scheduler.bandsTheManagerWatches.load(ordering: .relaxed) != 0 { armBandDescriptorPolls(ring) }
            rearmTimeout(ring)
            sleepAim.store(armedDeadline ?? .max, ordering: .sequentiallyConsistent)
            // Announce the sleep, then look once more: a request that raced with the
            // announcement either sees `awake == false` (and writes the eventfd, or
            // leaves a timer for the wake-up at `sleepAim`) or is seen here.
            awake.store(false, ordering: .sequentiallyConsistent)
            if !requests.isEmpty {
                awake.store(true, ordering: .relaxed)
                submitWorkerWakes(ring)
                continue
            }
            workerWakesQueued = false
            submitAndWait(ring)
            awake.store(true, ordering: .relaxed)
            trace?.record(.managerWoke)
            lock.withLock { wakeups += 1 }
            reap(ring)
        }
    }

    private func takeRequests() {
        for request in requests.takeAll() {
            switch request {
            case .oneShot(let deadline, let leeway, let wall, let action):
                armTimer(deadline: deadline, wall: wall, interval: 0, leeway: leeway, owner: .action(action))
            case .arm(let target, let deadline, let leeway):
                target.armed(armTimer(deadline: deadline, wall: false, interval: 0, leeway: leeway,
                                      owner: .target(target)))
            case .register(let source): register(source, ring.unsafelyUnwrapped)
            case .reschedule(let source): reschedule(source, onlyIfChanged: true)
            case .cancel(let source): unregister(source, ring.unsafelyUnwrapped)
            case .rearmPoll(let source): kernelSide?.rearmPoll(source, ring.unsafelyUnwrapped)
            case .wallClockChanged: moveWallClockTimers()
            case .bandTimersUnwatched: break  // the next `rearmTimeout` looks at the bands
            case .run(let body): body(ring.unsafelyUnwrapped)
            }
        }
    }

    /// Arms a poll of the eventfd (not a read: a ring read of a non-blocking eventfd
    /// completes at once with EAGAIN on kernels before ~5.19, which would spin).
    private func armWakeRead(_ ring: Ring) {
        guard let wakeFD else { return }
        retrying(ring) { () throws(Errno) in
            try ring.preparePollIn(fd: wakeFD.fd, userData: userData(.wake, 0))
        }
    }

    /// Submits what is queued and sleeps until a completion comes. EBUSY/EAGAIN mean
    /// completions must be reaped before more can be submitted (io_uring_enter(2)):
    /// they are reaped here and the loop goes round again.
    private func submitAndWait(_ ring: Ring) {
        do throws(Errno) {
            _ = try ring.submitAndWait(waitFor: 1)
        } catch {
            if error == .tryAgain || error == .busy {
                reap(ring)
                return
            }
            ringletBug("io_uring_enter failed on the manager's ring: \(error.name)")
        }
    }

    private func reap(_ ring: Ring) {
        scheduler.beginWakeBatch()
        defer { endWakeBatch(ring) }
        var fireTimers = false
        while let completion = ring.nextCompletion() {
            switch Tag(rawValue: completion.userData >> 56) {
            case .wake:
                wakeFD?.drain()
                armWakeRead(ring)
                kernelSide?.takeCaughtSignals()
            case .timeout:
                // A completion for a timeout replaced since is recognised by its
                // generation and dropped. The armed one is gone whatever its result
                // (expired, or refused: ENOMEM...), so the next loop arms a new one.
                if completion.userData & 0x00FF_FFFF_FFFF_FFFF == timeoutGeneration & 0x00FF_FFFF_FFFF_FFFF {
                    armedDeadline = nil
                }
                fireTimers = true
            case .poll:
                kernelSide?.pollCompleted(completion, ring)
            case .signals:
                kernelSide?.signalsCompleted(completion, ring)
            case .pollRemove:
                kernelSide?.pollRemoveCompleted(completion, ring)
            case .clockChange:
                clockChanged(completion, ring)
            case .io, .ioPoll:
                // DispatchIO's handlers are woken at once: the manager may reap for a long
                // while (reads of cached pages complete as it submits the next ones), and
                // the handlers that give the buffers back must run meanwhile — held to the
                // end of the reap, they leave a large read waiting for buffers.
                scheduler.endWakeBatch()
                ioCompletions?(completion, ring)
                scheduler.beginWakeBatch()
            case .socket, .socketPoll:
                // As DispatchIO's: the handlers are woken at once.
                scheduler.endWakeBatch()
                socketCompletions?(completion, ring)
                scheduler.beginWakeBatch()
            case .workerWake:
                workerWakeRefused(completion)
            case .bandDescriptors:
                bandDescriptorsPolled(completion)
            case .timeoutRemove, .ioCancel, .socketCancel, .none:
                break
            }
        }
        if fireTimers || (armedDeadline.map { $0 <= MonotonicClock.nanoseconds } ?? false) {
            // Timers left for this wake-up (`submit(_:neededBy:)`) are armed first, so
            // that those whose windows have begun fire with the rest.
            takeRequests()
            let now = MonotonicClock.nanoseconds
            fire(at: now)
            fireForBands(at: now)
        }
    }

    /// A full submission queue is submitted and the preparation retried.
    func retrying(_ ring: Ring, _ prepare: () throws(Errno) -> Void) {
        for _ in 0..<3 {
            do throws(Errno) {
                try prepare()
                return
            } catch {
                _ = try? ring.submitAndWait(waitFor: 0)
            }
        }
        ringletBug("the manager's submission queue stays full ('ringEntries' \(configuration.ringEntries))")
    }

    func userData(_ tag: Tag, _ generation: UInt64) -> UInt64 {
        tag.rawValue << 56 | (generation & 0x00FF_FFFF_FFFF_FFFF)
    }
}

/// The manager thread's start result, handed to the thread that started it, and the
/// event that thread waits on. Both threads hold it, so it outlives the last post.
// @unchecked Sendable: `value` under `lock`; `event` is a futex word.
private final class StartOutcome: @unchecked Sendable {
    let lock = FutexLock()
    let event = FutexEvent()
    private var value: RuntimeError??

    var result: RuntimeError?? { lock.withLock { value } }
    func set(_ failure: RuntimeError?) {
        lock.withLock { value = .some(failure) }
        event.post()
    }

    deinit {
        lock.deallocate()
        event.deallocate()
    }
}
