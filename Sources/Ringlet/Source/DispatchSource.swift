import Synchronization

/// A dispatch source: kernel events, timers or user data delivered to a queue,
/// source-compatible with the toolchain's Dispatch (plus process and file-system
/// sources, which Linux Dispatch lacks).
///
/// Sources start inactive: set the handlers, then `activate()` (or `resume()`).
/// Events merge into one pending value; a delivery runs the event handler with that
/// value as `data`, so events that arrive while a handler runs or while the source is
/// suspended are coalesced, and a handler never runs concurrently with itself. The
/// cancel handler runs exactly once, after the last event handler: it is where an
/// fd's owner closes it.
///
/// Cost: a source carries three work nodes of its own (its delivery, its cancellation,
/// its registration; work nodes, taken at activation), so an event never needs an
/// allocation, the manager thread never waits, and sources never take nodes from the
/// runtime's work-node pool (the `sources` key alone bounds them). An active source
/// stays alive until it is cancelled, even when the program drops its last reference:
/// its nodes hold it.
///
///   inactive --activate--> active --cancel--> cancelling --(manager let go)--> cancelled
///                                                           (cancel handler runs)
// @unchecked Sendable: handlers under `lock`; events through atomics; `spare` owned by whoever set `deliveryQueued`; `registration` by the manager thread.
public class DispatchSource: DispatchObject, @unchecked Sendable {
    /// What the source watches; fixed at creation.
    enum Kind {
        case timer(strict: Bool)
        case dataAdd, dataOr, dataReplace
        case read(Int32), write(Int32)
        case signal(Int32)
        case process(Int32, DispatchSource.ProcessEvent)
        case fileSystem(Int32, DispatchSource.FileSystemEvent)
        case memoryPressure(DispatchSource.MemoryPressureEvent)
        /// A PSI trigger's descriptor, owned (POLLPRI): a memory-pressure source's own
        /// watch (MemoryPressureWatch), never made by a program.
        case pressureTrigger(Int32)
    }

    /// A handler as given: a closure or a work item.
    enum Handler {
        case block(() -> Void)
        case item(DispatchWorkItem)

        func run() {
            switch self {
            case .block(let body): body()
            case .item(let item): item.perform()
            }
        }
    }

    let kind: Kind
    /// The source's own serial queue: it targets the queue the program gave, carries
    /// suspend/resume, and serialises the handlers.
    let queue: DispatchQueue
    let lock = FutexLock()
    // Under `lock`:
    var eventHandler: Handler?
    var cancelHandler: Handler?
    var registrationHandler: Handler?
    var handlerQoS: (qos: DispatchQoS, flags: DispatchWorkItemFlags) = (.unspecified, [])
    var activated = false
    /// The label of the queue the handlers run on, for messages.
    var targetLabel: String
    var timerSpec: TimerSpec?
    /// `timerSpec` changed since the manager last armed from it: a `.reschedule`
    /// request finds nothing to do when the registration already applied the change
    /// (else a one-shot that fired in between would be armed, and fire, again).
    var timerSpecUnapplied = false
    #if canImport(_Concurrency)
    /// Where deliveries go instead of the event handler while a task iterates the
    /// source's events (DispatchSource+Events.swift).
    var eventStream: SourceEventStream?
    #endif
    /// The source's own nodes, one per `NodeRole`, allocated at activation (see
    /// DispatchSource+Lifecycle.swift). Each initialised node holds the source.
    var ownNodes: WorkNodeRef?
    /// The delivery node when no delivery is queued. Not under `lock`: it belongs to
    /// whoever set `deliveryQueued` (see DispatchSource+Delivery.swift).
    var spare: WorkNodeRef?
    /// The node that runs the cancel handler, pushed once.
    var finalNode: WorkNodeRef?
    /// The node that runs the registration handler, pushed once registered.
    var registrationNode: WorkNodeRef?
    // Lock-free:
    let pending = Atomic<UInt>(0)
    let deliveryQueued = Atomic<Bool>(true)
    /// A staged strict timer's deadline, still ahead when the manager handed its fire
    /// over (0: none): the delivery sleeps until then (DispatchSource+Timer.swift).
    let stagedDeadline = Atomic<UInt64>(0)
    let cancelled = Atomic<Bool>(false)
    let finished = Atomic<Bool>(false)
    /// The source counts toward the profile's `sources` capacity: from `activate()`
    /// until it is cancelled (`releaseCapacityIfHeld`).
    let holdsCapacity = Atomic<Bool>(false)
    let currentData = Atomic<UInt>(0)
    /// The QoS deliveries run at (packed `QoSPriority`).
    let eventPriority = Atomic<UInt8>(0)
    /// Read and write sources: the poll ended on a ready descriptor and is re-armed
    /// after the next handler, not at once (it would complete again at once).
    let pollRearmOwed = Atomic<Bool>(false)
    /// Read and write sources: (device, inode) of the file the fd named at creation,
    /// so that a delivery never runs for a file now behind a reused fd number.
    let descriptorIdentity: (device: UInt64, inode: UInt64)?
    /// Manager-thread state: its registration (see ManagerThread+Sources.swift).
    var registration = SourceRegistration()
    /// The timer in its band's table (`BandTimers`), under that table's lock.
    var bandTimer: TimerQueue.Handle?

    init(kind: Kind, queue target: DispatchQueue?) {
        self.kind = kind
        let target = target ?? DispatchQueue.global()
        targetLabel = target.label
        queue = DispatchQueue(label: target.label, kind: .serial, qos: .unspecified, target: target, inactive: true)
        descriptorIdentity = Self.identity(of: kind)
        super.init()
        eventPriority.store(queue.resolvePriority(for: QoSPriority(.unspecified), flags: .detached,
                                                  itemQoS: .unspecified).rawValue, ordering: .relaxed)
    }

    deinit {
        // Every initialised node held the source: none is left by now.
        ownNodes?.deallocate()
        lock.deallocate()
    }

    /// "read source on fd 5 (queue 'x')": how messages name this source.
    var name: String {
        let what: String
        switch kind {
        case .timer: what = "timer source"
        case .dataAdd, .dataOr, .dataReplace: what = "user-data source"
        case .read(let fd): what = "read source on fd \(fd)"
        case .write(let fd): what = "write source on fd \(fd)"
        case .signal(let signo): what = "signal source for signal \(signo)"
        case .process(let pid, _): what = "process source for pid \(pid)"
        case .fileSystem(let fd, _): what = "file-system source on fd \(fd)"
        case .memoryPressure: what = "memory-pressure source"
        case .pressureTrigger(let fd): what = "memory-pressure trigger on fd \(fd)"
        }
        return "\(what) (queue '\(lock.withLock { targetLabel })')"
    }

    // The DispatchObject lifecycle; see DispatchSource+Lifecycle.swift.

    /// Registers the source and starts its handlers; a no-op when already active.
    public override func activate() { activateSource() }
    /// Stops deliveries at the next handler boundary (counted); events keep merging.
    public override func suspend() { queue.suspend() }
    /// Undoes one `suspend()`; activates a source never activated (as GCD).
    public override func resume() { resumeSource() }
    /// Moves the handlers onto `queue`.
    public override func setTarget(queue target: DispatchQueue) { setSourceTarget(target) }

    // MARK: DispatchSourceProtocol

    public var handle: UInt {
        switch kind {
        case .read(let fd), .write(let fd), .fileSystem(let fd, _): return UInt(bitPattern: Int(fd))
        case .signal(let signo): return UInt(bitPattern: Int(signo))
        case .process(let pid, _): return UInt(bitPattern: Int(pid))
        case .timer, .dataAdd, .dataOr, .dataReplace, .memoryPressure, .pressureTrigger: return 0
        }
    }

    public var mask: UInt {
        switch kind {
        case .process(_, let events): return events.rawValue
        case .fileSystem(_, let events): return events.rawValue
        case .memoryPressure(let events): return events.rawValue
        default: return 0
        }
    }

    /// Inside the event handler: what the event being handled carries. Elsewhere:
    /// what the last one carried.
    public var data: UInt { currentData.load(ordering: .relaxed) }

    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    public func setEventHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {
        lock.withLock {
            eventHandler = handler.map { .block($0) }
            handlerQoS = (qos, flags)
        }
        updateEventPriority()
    }

    public func setEventHandler(handler: DispatchWorkItem) {
        lock.withLock {
            eventHandler = .item(handler)
            handlerQoS = (handler.qos, handler.flags)
        }
        updateEventPriority()
    }

    public func setCancelHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {
        lock.withLock { cancelHandler = handler.map { .block($0) } }
    }

    public func setCancelHandler(handler: DispatchWorkItem) {
        lock.withLock { cancelHandler = .item(handler) }
    }

    public func setRegistrationHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags,
                                       handler: DispatchSourceHandler?) {
        lock.withLock { registrationHandler = handler.map { .block($0) } }
    }

    public func setRegistrationHandler(handler: DispatchWorkItem) {
        lock.withLock { registrationHandler = .item(handler) }
    }

    /// Deliveries run at the QoS GCD's rules give the handler on this source's queue.
    func updateEventPriority() {
        let (qos, flags) = lock.withLock { handlerQoS }
        let priority = queue.resolvePriority(for: QoSPriority(.unspecified), flags: flags.union(.detached),
                                             itemQoS: qos)
        eventPriority.store(priority.rawValue, ordering: .relaxed)
    }
}

extension DispatchSource: DispatchSourceProtocol, DispatchSourceRead, DispatchSourceWrite, DispatchSourceSignal,
    DispatchSourceUserDataAdd, DispatchSourceUserDataOr, DispatchSourceUserDataReplace, DispatchSourceTimer,
    DispatchSourceProcess, DispatchSourceFileSystemObject, DispatchSourceMemoryPressure {
    public func add(data: UInt) { merge(data) }
    public func or(data: UInt) { merge(data) }
    public func replace(data: UInt) { merge(data) }
}
