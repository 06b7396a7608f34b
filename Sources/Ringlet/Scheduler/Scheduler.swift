import Synchronization

/// The fixed worker pool and the root run queues it serves.
///
/// Every thread the pool will ever have is created by `start()`. Workers take the
/// most urgent node their band allows (strict QoS), park on their own futex event
/// when there is none, and are woken one at a time by `enqueue`. A worker that
/// blocks in a Ringlet wait reports it (`workerWillBlock`), which lets one reserve
/// worker run in its place. While runnable work waits for a thread, or every pool
/// thread is blocked, the stall watch (Scheduler+StallWatch.swift) looks at the pool
/// from the manager thread and reports work that cannot make progress.
///
/// Lock order: a queue's lock may be held while taking the scheduler lock (a push to
/// a root run queue); the scheduler lock may be held while taking the work-node
/// pool's. The stall report takes queue locks and the queue registry's lock only
/// after dropping the scheduler lock. Functions named `...Locked` run with the
/// scheduler lock held.
// @unchecked Sendable: run queues, idle lists, counts and the watch under `lock`; the hint is atomic.
final class Scheduler: @unchecked Sendable {
    let configuration: RuntimeConfiguration
    let pool: WorkNodePool
    // The raw allocations below are made in `init` after the pool, the one step that
    // can throw: a throwing initialiser runs no deinit, so nothing may be allocated
    // before it (a refused start frees what it made).
    let lock: FutexLock
    // The properties under `lock` are marked `@exclusivity(unchecked)`: the lock already
    // keeps their accesses apart, and the runtime's dynamic check costs a call into the
    // Swift runtime (and a TLS lookup) per access on the path every wake-up takes.
    @exclusivity(unchecked) var runQueues: RunQueues
    /// The highest occupied run-queue index (-1: none), readable without the lock;
    /// drainers poll it between items to yield to more urgent work.
    private let highestPendingHint = Atomic<Int>(-1)
    @exclusivity(unchecked) var idle: [[Worker]] = Array(repeating: [], count: WorkerBand.allCases.count)
    private(set) var workers: [Worker] = []
    @exclusivity(unchecked) var blockedCount = 0
    @exclusivity(unchecked) var activeReserve = 0
    @exclusivity(unchecked) var reserveCount = 0
    private var startedThreads = 0
    private let started: FutexEvent
    /// Nodes taken from the run queues so far: the stall watch's progress mark.
    @exclusivity(unchecked) var progress: UInt64 = 0
    /// Nodes taken per QoS class (`RunQueueIndex.classOrdinal`), for the stall watch.
    let takenPerClass: UnsafeMutablePointer<UInt64>
    /// Pool threads blocked in waits without a timeout.
    var untimedBlockedCount = 0
    /// The stall watch's state (Scheduler+StallWatch.swift).
    var watch = StallWatch()
    /// The kernel-cover look's memory (Scheduler+KernelCover.swift). Manager thread only.
    var coverLook = KernelCoverLook()
    /// Workers covered since start because the watch found them blocked in the kernel.
    var coveredInKernelTotal: UInt64 = 0
    /// The timers each band keeps (high, utility, background; Scheduler+BandTimers.swift),
    /// nil for a band without workers.
    let keptTimers: [BandTimers?]
    /// The descriptors each band watches (same bands; Source/BandDescriptors.swift).
    let keptDescriptors: [BandDescriptors?]
    /// Each band's parked worker that sleeps until its band's next window. Under `lock`.
    @exclusivity(unchecked) var timerWatchers: [Worker?] = [nil, nil, nil]
    /// Bands whose timers the manager fires too while a worker of theirs is blocked
    /// (bit per band). Set by the band's workers, cleared by the manager.
    let bandsTheManagerWatches = Atomic<UInt8>(0)
    /// Times a band asked the manager to watch its windows (tests).
    let bandWatchRequests = Atomic<Int>(0)
    /// Wakes a firing worker took on itself instead (`RuntimeStatistics`).
    let wakesTakenByFiringWorker = Atomic<Int>(0)

    /// Where each band's workers pin themselves (nil: nowhere).
    let placement: CorePlacement?
    /// What running a node taken from a root run queue means: the layer above's
    /// (`NodeRunner.run`, given by `Runtime`). The scheduler moves nodes between run
    /// queues and workers and never looks at what a node carries.
    let runNode: (WorkNodeRef, ThreadContext) -> Void

    init(configuration: RuntimeConfiguration, placement: CorePlacement? = nil,
         runNode: @escaping (WorkNodeRef, ThreadContext) -> Void) throws(RuntimeError) {
        self.configuration = configuration
        self.placement = placement
        self.runNode = runNode
        pool = try WorkNodePool(capacity: configuration.workNodes)
        lock = FutexLock()
        runQueues = RunQueues()
        started = FutexEvent()
        takenPerClass = .allocate(capacity: 5)
        takenPerClass.initialize(repeating: 0, count: 5)
        let plan = configuration.workerPlan
        keptTimers = [WorkerBand.high, .utility, .background].map { band in
            (plan.first { $0.0 == band }?.1 ?? 0) > 0 ? BandTimers(band: band) : nil
        }
        keptDescriptors = keptTimers.map { kept in kept.map { BandDescriptors(band: $0.band) } }
    }

    /// Runs only when the runtime did not start: a started scheduler is kept by its
    /// pool threads for the life of the process.
    deinit {
        lock.deallocate()
        runQueues.deallocate()
        started.deallocate()
        takenPerClass.deallocate()
    }

    /// Creates every pool thread and waits until each has applied its kernel
    /// priority and made its first look at the run queues (so it is parked, listed
    /// idle, or running work). Throws when the system refuses a thread (naming how
    /// many were made).
    ///
    /// Why the first look: `enqueue` wakes only threads listed idle, and a reserve
    /// thread takes work only once activated. A reserve thread still on its way to
    /// its first park when a worker blocks and work arrives is neither: nothing
    /// would wake it, and it would park beside the work.
    ///
    /// One thread at a time, each created once the one before made its first look:
    /// so the threads make their first allocation in the order of the plan, and the C
    /// library, which hands a thread past the `mallocArenas` cap the next arena in turn
    /// (glibc's malloc/arena.c, `reused_arena`), spreads the high band — the first
    /// threads of the plan — over different arenas. Started all at once, the threads
    /// took arenas in whatever order the kernel ran them, and two high-band workers
    /// could share one: a burst of `Task.sleep`s then cost far more context switches,
    /// most of them waits for the arena's lock.
    func start() throws(RuntimeError) {
        let plan = configuration.workerPlan
        var index = 0
        for (band, count) in plan {
            for _ in 0..<count {
                workers.append(Worker(index: index, band: band, scheduler: self))
                index += 1
            }
        }
        reserveCount = plan.first { $0.0 == .reserve }?.1 ?? 0
        for (created, worker) in workers.enumerated() {
            do throws(Errno) {
                try ThreadControl.start(stackBytes: configuration.workerStackBytes) {
                    worker.threadMain()
                }
            } catch {
                let wanted = workers.count
                // No pool thread runs: drop the workers, whose references back to the
                // scheduler would otherwise keep both alive (and their memory leaked).
                // With threads running, those threads keep everything, parked.
                if created == 0 { workers.removeAll() }
                throw RuntimeError.threadCreationFailed(created: created, wanted: wanted, errno: error)
            }
            waitUntilStarted(created + 1)
        }
    }

    /// Waits until `count` pool threads have made their first look at the run queues.
    private func waitUntilStarted(_ count: Int) {
        while true {
            let seen = started.snapshot
            if lock.withLock({ startedThreads }) >= count { return }
            _ = started.wait(ifUnchangedFrom: seen)
        }
    }

    /// Invoked with the lock held, on `worker`'s first look at the run queues: it is
    /// ready, and `start()` may return once every thread is (a futex post, once per
    /// thread in the process's life).
    private func workerReadyLocked(_ worker: Worker) {
        worker.ready = true
        startedThreads += 1
        started.post(wake: Int32.max)
    }

    #if DEBUG
    /// Tests only: runs on each pool thread before its first look at the run queues
    /// (to hold one back and prove `start()` waits for it). Installed before the runtime starts.
    static let beforeFirstLook = TestHook<Worker, Void>()
    #endif

    // MARK: Enqueue and dequeue

    /// Appends `node` to the root run queue of its priority and wakes one idle worker
    /// that may take it (or a reserve worker covering a blocked one).
    func enqueue(_ node: WorkNodeRef) {
        ForkGuard.check("submitting work")
        let index = RunQueueIndex.of(node.pointee.priority)
        // A worker firing its band's window (or taking its descriptors' events) runs
        // what it pushes for its own band next: no parked neighbour is woken for it,
        // and nothing waits for a thread, so the stall watch is not armed either.
        let takesItNext = callerTakesItNext(index)
        lock.lock()
        runQueues.append(node, at: index)
        highestPendingHint.store(runQueues.highestIndex, ordering: .relaxed)
        var wake: Worker?
        if takesItNext {
            // A parked worker of the band it would have woken: counted as a wake taken.
            if !idle[WorkerBand.wakeOrder(for: index).first.rawValue].isEmpty {
                wakesTakenByFiringWorker.wrappingAdd(1, ordering: .relaxed)
            }
        } else {
            wake = pickWorkerToWakeLocked(for: index)
        }
        // No thread may take it now: the stall watch looks until it is taken.
        let armWatch = wake == nil && !takesItNext && armWatchIfIdleLocked()
        lock.unlock()
        if let wake { post(wake) }
        if armWatch { scheduleWatchTick() }
    }

    /// Invoked with the lock held. Removes and returns the worker to wake, if any.
    private func pickWorkerToWakeLocked(for index: Int) -> Worker? {
        let order = WorkerBand.wakeOrder(for: index)
        if let worker = popIdleLocked(order.first) { return worker }
        if let second = order.second, let worker = popIdleLocked(second) { return worker }
        return wakeReserveIfJustifiedLocked()
    }

    /// Invoked with the lock held. Takes a parked worker of `band` to wake, the one
    /// that watches the band's timers last (it stays asleep until their window).
    private func popIdleLocked(_ band: WorkerBand) -> Worker? {
        let count = idle[band.rawValue].count
        guard count > 0 else { return nil }
        var at = count - 1
        if at > 0, band != .reserve, idle[band.rawValue][at] === timerWatchers[band.rawValue] { at -= 1 }
        let worker = idle[band.rawValue].remove(at: at)
        if band != .reserve, worker === timerWatchers[band.rawValue] { timerWatchers[band.rawValue] = nil }
        worker.state = .searching
        return worker
    }

    /// Invoked with the lock held. A reserve worker may run while fewer reserve
    /// workers run than pool threads are blocked.
    func wakeReserveIfJustifiedLocked() -> Worker? {
        guard activeReserve < min(reserveCount, blockedCount),
              let reserve = idle[WorkerBand.reserve.rawValue].popLast() else { return nil }
        activeReserve += 1
        reserve.reserveActive = true
        reserve.state = .searching
        return reserve
    }

    /// The next node `worker` should run; parks the worker until woken when there is
    /// none (and then returns nil so the worker loops).
    func nextNode(for worker: Worker) -> WorkNodeRef? {
        if worker.band != .reserve, let kept = keptTimers[worker.band.rawValue] {
            let now = MonotonicClock.nanoseconds
            // A window that has opened fires now: this thread is awake anyway.
            if kept.opens.load(ordering: .relaxed) <= now { fireKeptTimers(kept, on: worker) }
            if let watched = keptDescriptors[worker.band.rawValue], watched.busyLookDue(at: now) {
                takeDescriptorEvents(watched, on: worker)
            }
        }
        lock.lock()
        if !worker.ready { workerReadyLocked(worker) }
        if worker.coveredInKernel { uncoverLocked(worker) }
        if let node = takeLocked(for: worker) { return node }
        // No search spin here: on a board with 1-4 cores a spinning idle worker
        // takes the CPU from the thread that would produce its work (it made serial
        // async slower). Serial queues' drainers wait briefly instead.
        // Park, after giving back cached nodes so a producer waiting for the pool
        // can have them.
        if let context = worker.context, context.nodeCacheCount > 0 {
            lock.unlock()
            pool.giveBack(context, idling: true)
            lock.lock()
            if let node = takeLocked(for: worker) { return node }
        } else {
            // Nothing of ours to give back, but a submitter waiting for the pool must
            // not wait for a threshold that frees from nowhere else may never reach.
            pool.wakeWaitersIfAnyFree()
        }
        if worker.band == .reserve && worker.reserveActive {
            worker.reserveActive = false
            activeReserve -= 1
        }
        worker.state = .parked
        idle[worker.band.rawValue].append(worker)
        lock.unlock()
        return park(worker)
    }

    /// Invoked with the lock held. A reserve thread runs only while activated, and
    /// only while fewer reserve threads run than pool threads are blocked.
    private func mayRunLocked(_ worker: Worker) -> Bool {
        worker.band != .reserve || (worker.reserveActive && activeReserve <= min(reserveCount, blockedCount))
    }

    /// Invoked with the lock held; unlocks it when it returns a node.
    private func takeLocked(for worker: Worker) -> WorkNodeRef? {
        guard mayRunLocked(worker), let index = runQueues.highestIndex(in: worker.band.indices),
              let node = runQueues.removeFirst(at: index) else { return nil }
        highestPendingHint.store(runQueues.highestIndex, ordering: .relaxed)
        worker.state = .running
        progress &+= 1
        takenPerClass[index / RunQueueIndex.perClass] &+= 1
        lock.unlock()
        return node
    }

    /// True when a node more urgent than `index` waits that `band` may take: a
    /// drainer at `index` should yield. Lock-free.
    @inline(__always)
    func hasMoreUrgentWork(than index: Int, for band: WorkerBand) -> Bool {
        let highest = highestPendingHint.load(ordering: .relaxed)
        return highest > index && band.indices.contains(highest)
    }

    /// True when a node at `index` or more urgent waits that `band` may take (nil
    /// band: any). A drainer that used up its batch yields only then. Lock-free.
    @inline(__always)
    func hasWork(atOrAbove index: Int, for band: WorkerBand?) -> Bool {
        let highest = highestPendingHint.load(ordering: .relaxed)
        guard highest >= index else { return false }
        return band?.indices.contains(highest) ?? true
    }

    // MARK: Blocking accounting

    /// The calling pool thread is about to block in a Ringlet wait.
    /// `timed`: the wait ends by itself (a timeout), so it cannot be part of a deadlock.
    func workerWillBlock(_ worker: Worker, reason: WaitReason, timed: Bool) {
        lock.lock()
        if worker.coveredInKernel { uncoverLocked(worker) }
        worker.state = .blocked
        worker.context?.blockedOn = reason
        worker.blockedUntimed = !timed
        blockedCount += 1
        if !timed {
            untimedBlockedCount += 1
            if untimedBlockedCount == workers.count { watch.everyThreadBlocked(progress: progress) }
        }
        let reserve = runQueues.count > 0 ? wakeReserveIfJustifiedLocked() : nil
        // Work waits that this thread was running, or the pool is blocked: watch it.
        let armWatch = (runQueues.count > 0 || untimedBlockedCount == workers.count) && armWatchIfIdleLocked()
        let bandUnwatched = bandLosesItsWatcherLocked(worker)
        let newWatcher = watcherToPostLocked(worker)
        lock.unlock()
        reserve?.event.post()
        newWatcher?.event.post()
        if armWatch { scheduleWatchTick() }
        if let aim = bandUnwatched {
            RuntimeParts.shared.manager.takeUnretainedValue().submit(.bandTimersUnwatched, neededBy: aim)
        }
    }

    /// Invoked with the lock held. A worker the watch found blocked in the kernel is
    /// back: it no longer counts as blocked (a reserve worker covering it finishes
    /// its item and parks).
    func uncoverLocked(_ worker: Worker) {
        worker.coveredInKernel = false
        blockedCount -= 1
    }

    /// The calling pool thread has left its Ringlet wait.
    func workerDidUnblock(_ worker: Worker) {
        lock.lock()
        worker.state = .running
        worker.context?.blockedOn = nil
        blockedCount -= 1
        if worker.blockedUntimed {
            worker.blockedUntimed = false
            untimedBlockedCount -= 1
            watch.someThreadUnblocked()
        }
        lock.unlock()
    }

    /// Pool threads blocked in a wait that `matches` (tests: proof that a thread is
    /// inside a given wait, not just about to enter it).
    func blockedThreads(where matches: (WaitReason) -> Bool) -> Int {
        lock.withLock { workers.filter { $0.state == .blocked && ($0.context?.blockedOn.map(matches) ?? false) }.count }
    }

    // MARK: Statistics

    func snapshot() -> (pending: [Int], blocked: Int, activeReserve: Int, parked: Int, watching: Bool,
                        coveredNow: Int, coveredTotal: Int) {
        lock.withLock {
            var pending = Array(repeating: 0, count: QoSLevel.count)
            for index in 0..<RunQueueIndex.count {
                pending[RunQueueIndex.level(ofIndex: index).rawValue] += runQueues.count(at: index)
            }
            let covered = workers.filter { $0.coveredInKernel }.count
            return (pending, blockedCount - covered, activeReserve, idle.reduce(0) { $0 + $1.count }, watch.armed,
                    covered, Int(coveredInKernelTotal))
        }
    }
}
