import Synchronization

/// A FIFO of work items run by Ringlet's fixed worker pool; source-compatible with
/// `Dispatch.DispatchQueue`.
///
/// Serial queues run one item at a time in submission order; concurrent queues run
/// items in parallel (up to the pool's worker count), and `.barrier` items alone.
/// Every queue runs its items on its target, and ultimately on a global (root)
/// queue; a serial target serialises everything that targets it.
///
/// Cost: `async` takes one node from the runtime's fixed pool (and waits when the
/// pool is full, see `RuntimeConfiguration.workNodes`); no thread is ever created.
// @unchecked Sendable: `state` and `specifics` under `lock`; the rest is immutable or atomic.
public final class DispatchQueue: DispatchObject, @unchecked Sendable {
    /// What kind of queue this is; fixed at creation.
    enum Kind {
        /// One item at a time, FIFO.
        case serial
        /// Items in parallel; barriers alone.
        case concurrent
        /// A global queue: items go straight into the scheduler's run queue of `level`.
        case root(QoSLevel)
        /// The main queue: serial, drained only by the main thread in `dispatchMain()`.
        case main
    }

    public let label: String
    let kind: Kind
    /// The QoS given at creation (`.unspecified` when none), kept as its class and its
    /// relative priority (-15...0) in two bytes rather than 16: a queue's bytes count
    /// (`ringlet bench`'s memory row).
    var requestedQoS: DispatchQoS {
        DispatchQoS(qosClass: requestedClass, relativePriority: Int(requestedRelativePriority))
    }
    private let requestedClass: DispatchQoS.QoSClass
    private let requestedRelativePriority: Int8
    /// Items sent here are not clamped by a process clamp (`Importance`): a service's
    /// receive lane, which must see an urgent request to boost it. The main queue's
    /// thread is never demoted, so it is exempt too. Set once, before items are sent.
    var isImportanceExempt: Bool { importanceExempt.load(ordering: .relaxed) || isMain }
    let importanceExempt = Atomic<Bool>(false)
    /// Items that may run at once: 1 for serial queues (also in `state`, for reads
    /// without the lock). Derived from `kind`, not stored: a queue's bytes count
    /// (`ringlet bench`'s memory row).
    var width: Int {
        switch kind {
        case .serial, .main: return 1
        case .concurrent, .root: return Int(Int32.max)
        }
    }

    // The order of the stored properties is the object's layout: what a drainer reads
    // between items comes first, and the inbox, which every producer's exchange writes,
    // comes last, so that those writes do not take away the line the drainer reads
    // (else the drainer's look at `stopRequested` misses the cache after every push
    // from another core).

    /// Mirrors `state.isSuspended` for drainers running a batch without the lock.
    let stopRequested = Atomic<Bool>(false)
    /// A more urgent item arrived while a drainer runs (a `QoSPriority` raw value,
    /// 0: none): the drainer hands off to a worker that may run it when its own band
    /// may not. Read by the drainer between items without the lock.
    let overrideSignal = Atomic<UInt8>(0)
    /// This queue's number, given by `QueueRegistry` at creation (1, 2, ...; never
    /// reused): how breadcrumbs name the queue an item came from (`Breadcrumb`).
    var number: UInt32 = 0

    /// The queue's state machine, under `lock` (QueueState.swift). A `ParkingLock`:
    /// its word lives in the queue's own allocation.
    let lock = ParkingLock()
    // Unchecked: `lock` keeps the accesses apart (Scheduler's `runQueues` says why).
    @exclusivity(unchecked) var state: QueueState
    /// QoS this queue imposes on its items: its own, else its target chain's
    /// (`.unspecified` when the chain has none: items keep their own).
    var floorPriority: QoSPriority {
        get { QoSPriority(packed: floorStorage.load(ordering: .relaxed)) }
        set { floorStorage.store(newValue.rawValue, ordering: .relaxed) }
    }
    /// Atomic: `async` reads it without the queue's lock while `setTarget` may change it.
    private let floorStorage = Atomic<UInt8>(0)
    /// Counts the takes of the inbox that moved nodes (written under the lock), so a
    /// drainer spinning on an empty queue sees items another thread took in for it.
    let pushCount = Atomic<UInt32>(0)
    /// The queue's own token node (outside the pool); `state.embeddedTokenInUse` says
    /// whether it is out.
    let embeddedToken = WorkNodeRef.allocate(capacity: 1)
    var specifics: [(key: AnyObject, value: AnyObject)] = []
    /// Links of `QueueRegistry` (under the registry's lock).
    var registryNext: Unmanaged<DispatchQueue>?
    var registryPrevious: Unmanaged<DispatchQueue>?
    /// Where `async` puts nodes without the lock (QueueInbox.swift); they reach
    /// `state.fifo` when a lock holder takes them (`takeInboxLocked`).
    let inbox = QueueInbox()

    init(label: String, kind: Kind, qos: DispatchQoS, target: DispatchQueue?, inactive: Bool) {
        self.label = label
        self.kind = kind
        requestedClass = qos.qosClass
        requestedRelativePriority = Int8(qos.relativePriority)  // clamped to -15...0 by DispatchQoS
        let width: Int
        switch kind {
        case .serial, .main: width = 1
        case .concurrent, .root: width = Int(Int32.max)
        }
        state = QueueState(width: width, target: target, inactive: inactive)
        stopRequested.store(inactive, ordering: .relaxed)
        if inactive { Self.queuesStopping.wrappingAdd(1, ordering: .releasing) }
        super.init()
        if case .root(.default) = kind {
            // The default global queue is GCD's "fallback": items keep their own QoS.
            floorPriority = QoSPriority(.unspecified)
        } else {
            floorPriority = Self.floor(requested: qos, target: target)
        }
        QueueRegistry.shared.insert(self)
    }

    /// Creates a queue. `target` defaults to the default-QoS global queue. With
    /// `.initiallyInactive`, nothing runs until `activate()`.
    public convenience init(label: String, qos: DispatchQoS = .unspecified, attributes: Attributes = [],
                            autoreleaseFrequency: AutoreleaseFrequency = .inherit, target: DispatchQueue? = nil) {
        let kind: Kind = attributes.contains(.concurrent) ? .concurrent : .serial
        self.init(label: label, kind: kind, qos: qos,
                  target: target ?? DispatchQueue.global(), inactive: attributes.contains(.initiallyInactive))
        // No cycle check: nothing targets a queue being created, so a target given
        // here cannot lead back to it (a walk up the target's chain made building a
        // chain of n queues cost n² steps).
    }

    deinit {
        QueueRegistry.shared.remove(self)
        if stopRequested.load(ordering: .relaxed) { Self.queuesStopping.wrappingSubtract(1, ordering: .relaxed) }
        if state.isInactive {
            if !state.fifo.isEmpty {
                ringletMisuse("queue '\(label)' was released while inactive with \(state.fifo.count) pending item(s); "
                    + "call activate() before releasing it, or the items would never run")
            }
        } else if state.suspendCount > 0 {
            ringletMisuse("queue '\(label)' was released while suspended (\(state.suspendCount) unbalanced "
                + "suspend()); resume() it before releasing it, or its items would never run")
        }
        embeddedToken.deallocate()
        if !state.targetIsRoot {
            var target = state.target.take()
            Self.releaseTarget(&target)
        }
    }

    /// The QoS given at creation.
    public var qos: DispatchQoS { requestedQoS }

    // The DispatchObject lifecycle; see DispatchQueue+Lifecycle.swift.

    /// Stops the queue at its next item boundary (counted). No-op on global queues.
    public override func suspend() { suspendQueue() }
    /// Undoes one `suspend()`, or activates an inactive queue; traps on over-resume.
    public override func resume() { resumeQueue() }
    /// Starts a queue created with `.initiallyInactive`.
    public override func activate() { activateQueue() }
    /// Moves the queue onto `queue`; traps on global/main queues and on cycles.
    public override func setTarget(queue: DispatchQueue) { setTargetQueue(queue) }

    var isSerial: Bool { width == 1 }
    var isRoot: Bool { if case .root = kind { return true } else { return false } }
    var isMain: Bool { if case .main = kind { return true } else { return false } }

    static func floor(requested: DispatchQoS, target: DispatchQueue?) -> QoSPriority {
        if requested.qosClass != .unspecified { return QoSPriority(requested) }
        return target?.floorPriority ?? QoSPriority(.unspecified)
    }

    /// Traps when making `child` target this queue would close a loop.
    func rejectCycle(with child: DispatchQueue) {
        var queue: DispatchQueue? = self
        while let current = queue {
            if current === child {
                ringletMisuse("setTarget(queue: '\(label)') on queue '\(child.label)' would make a cycle of targets; "
                    + "targets must lead to a global queue")
            }
            queue = current.currentTarget
        }
    }

    /// The queue's target now (nil for global queues and the main queue). Takes the lock.
    var currentTarget: DispatchQueue? { lock.withLock { state.target } }

    // MARK: Global and main queues

    /// The global concurrent queue of `qos`. Its items run at that QoS, except that
    /// the default queue lets items keep the QoS they bring (GCD's rule).
    public static func global(qos: DispatchQoS.QoSClass = .default) -> DispatchQueue {
        RootQueues.shared.queue(for: qos.level)
    }

    /// The queue bound to the main thread, drained by `dispatchMain()`.
    public static var main: DispatchQueue { RootQueues.shared.main }
}

/// The global queues and the main queue, created once.
// @unchecked Sendable: immutable after init.
final class RootQueues: @unchecked Sendable {
    static let shared = RootQueues()
    let queues: [DispatchQueue]
    let unmanagedQueues: [Unmanaged<DispatchQueue>]
    let main: DispatchQueue

    private init() {
        queues = QoSLevel.allLevels.map { level in
            DispatchQueue(label: "com.apple.root.\(level.rootLabel)-qos", kind: .root(level),
                          qos: DispatchQoS(qosClass: level.qosClass, relativePriority: 0),
                          target: nil, inactive: false)
        }
        unmanagedQueues = queues.map { Unmanaged.passUnretained($0) }
        main = DispatchQueue(label: "com.apple.main-thread", kind: .main, qos: .userInteractive,
                             target: nil, inactive: false)
    }

    func queue(for level: QoSLevel) -> DispatchQueue {
        queues[level == .unspecified ? QoSLevel.default.rawValue : level.rawValue]
    }

    /// The same, without a retain (the global queues live as long as the process).
    @inline(__always)
    func unmanagedQueue(for level: QoSLevel) -> Unmanaged<DispatchQueue> {
        unmanagedQueues[level == .unspecified ? QoSLevel.default.rawValue : level.rawValue]
    }
}
