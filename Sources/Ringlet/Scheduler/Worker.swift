import Synchronization

/// One pool thread: created at start, never destroyed, parked on its own futex
/// event when there is nothing it may run.
///
/// States (every change is made under the scheduler lock):
///
///   parked --(1) woken--> searching --(2) takes a node--> running
///   running --(2) takes the next node--> running
///   searching, running --(3) nothing it may run--> parked
///   running --(4) Ringlet wait--> blocked --(5) released--> running
///
///   (1) Scheduler.enqueue, Scheduler.workerWillBlock (pickWorkerToWakeLocked,
///       wakeReserveIfJustifiedLocked)
///   (2) Scheduler.nextNode (takeLocked)      (3) Scheduler.nextNode, parking
///   (4) Scheduler.workerWillBlock, from BlockingWait.perform
///   (5) Scheduler.workerDidUnblock
// @unchecked Sendable: `state` & co. under the scheduler lock; `context`/`threadID` set by its thread before it reports ready.
final class Worker: @unchecked Sendable {
    enum State: UInt8 {
        /// Sleeping on `event`, listed in the scheduler's idle list of its band.
        case parked
        /// Looking for work (just woken, or just finished an item).
        case searching
        /// Running an item or draining a queue.
        case running
        /// Inside a Ringlet wait (semaphore, group, work item, sync, node pool).
        case blocked
    }

    let index: Int
    let band: WorkerBand
    // Strong: workers and the scheduler live as long as the process.
    let scheduler: Scheduler
    let event = FutexEvent()
    /// Where its looks at its band's descriptors leave their events (BandDescriptors).
    let readyEvents = UnsafeMutablePointer<UInt64>.allocate(capacity: BandDescriptors.eventsPerLook)
    /// Under the scheduler lock.
    // Unchecked: the scheduler lock keeps the accesses apart (Scheduler's `runQueues` says why).
    @exclusivity(unchecked) var state: State = .searching
    /// Has made its first look at the run queues (`Scheduler.start` waits for it). Under the scheduler lock.
    var ready = false
    /// Reserve threads only: activated to cover a blocked worker. Under the scheduler lock.
    var reserveActive = false
    /// Blocked in a wait without a timeout (counts toward a deadlock). Under the scheduler lock.
    var blockedUntimed = false
    /// Found blocked in the kernel on its item by the stall watch, and counted as
    /// blocked so that a reserve worker covers it until it comes back to the
    /// scheduler. Under the scheduler lock.
    var coveredInKernel = false
    /// The thread's CPU-time clock (nil: unreadable), set before it reports ready.
    private(set) var cpuClock: Int32?
    /// Set by the thread itself once started.
    var context: ThreadContext?
    /// The thread's kernel id (gettid), set by the thread before it reports ready.
    private(set) var threadID: Int32 = 0
    /// Reserve threads on a big.LITTLE board: the band whose cores the thread is
    /// pinned to now (nil: none yet, every core). Its own thread only.
    private var coresOfBand: WorkerBand?

    init(index: Int, band: WorkerBand, scheduler: Scheduler) {
        self.index = index
        self.band = band
        self.scheduler = scheduler
    }

    /// Runs only for a worker whose thread was never created (a refused start).
    deinit {
        event.deallocate()
        readyEvents.deallocate()
    }

    var name: String {
        band == .reserve ? "ringlet-r\(index)" : "ringlet-w\(index)"
    }

    /// The thread body: applies the band's kernel priority and CPU placement once, then loops.
    func threadMain() {
        threadID = ThreadControl.threadID
        cpuClock = ThreadControl.cpuClock
        ThreadControl.setName(name)
        let context = ThreadContext(worker: self)
        self.context = context
        ThreadContext.install(context)
        KernelPriority.apply(band: band, configuration: scheduler.configuration)
        scheduler.placement?.apply(band: band)
        #if DEBUG
        _ = Scheduler.beforeFirstLook.call(self)
        #endif
        while true {
            guard let node = scheduler.nextNode(for: self) else { continue }
            if band == .reserve, let placement = scheduler.placement { takeCores(for: node, placement) }
            execute(node)
        }
    }

    /// A reserve thread covers a blocked worker of any band, so it runs on the cores of
    /// the band whose work it takes: a user-interactive item stays on the big cores even
    /// when every high-band worker is blocked, and utility work stays off them. Pinned
    /// again only when that band changes. Its nice value cannot follow the same way (an
    /// unprivileged thread never lowers it again, `WorkerBand`): it stays at 0.
    private func takeCores(for node: WorkNodeRef, _ placement: CorePlacement) {
        let owner = WorkerBand.wakeOrder(for: RunQueueIndex.of(node.pointee.priority)).first
        if owner == coresOfBand { return }
        coresOfBand = owner
        placement.apply(band: owner)
    }

    /// Runs one node taken from a root run queue.
    @inline(__always)
    func execute(_ node: WorkNodeRef) {
        scheduler.runNode(node, context.unsafelyUnwrapped)
    }
}
