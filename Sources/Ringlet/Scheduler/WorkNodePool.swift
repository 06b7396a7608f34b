/// The fixed pool every work node comes from, sized once at start by the
/// configuration key `workNodes` (principle 1 of DESIGN.md).
///
/// Nodes are handed out from a free list, and from a high-water mark into memory
/// never used before, so pages of a large pool are touched only when that many
/// items are pending at once. When the pool is empty the submitter waits (a Ringlet
/// wait, so a reserve worker may cover it) until a node is freed: nothing is dropped.
/// After `exhaustionWarningDelay` of waiting it prints one warning naming the pool
/// and the key that sizes it.
final class WorkNodePool: @unchecked Sendable {
    let capacity: Int
    private let storage: UnsafeMutablePointer<WorkNode>
    private let lock = FutexLock()
    private let freed = FutexEvent()
    private var freeList: WorkNodeRef?
    private var highWater = 0
    private var waiters = 0
    private var warned = false
    /// Nodes handed out and not yet returned.
    private(set) var inUse = 0
    private(set) var peakInUse = 0
    /// How many times a submitter had to wait for a node.
    private(set) var exhaustionWaits = 0

    static let exhaustionWarningDelay: Int64 = 1_000_000_000

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit {
        lock.deallocate()
        freed.deallocate()
        // Nodes still in use belong to queues that outlive the pool only in tests
        // that build private pools; the memory is released, contents are not.
        storage.deallocate()
    }

    /// Takes a node and initialises it. Waits while the pool is empty.
    func allocate(kind: WorkNode.Kind, priority: QoSPriority, isBarrier: Bool = false,
                  block: (() -> Void)? = nil, object: AnyObject? = nil,
                  group: DispatchGroup? = nil) -> WorkNodeRef {
        let node = take()
        node.initialize(to: WorkNode(next: nil, kind: kind, isBarrier: isBarrier,
                                     priority: priority, block: block, object: object,
                                     group: group))
        return node
    }

    /// Takes a node without waiting; nil when the pool is empty.
    func tryAllocate(kind: WorkNode.Kind, priority: QoSPriority, object: AnyObject?) -> WorkNodeRef? {
        lock.lock()
        let node: WorkNodeRef
        if let free = freeList {
            freeList = free.pointee.next
            node = free
        } else if highWater < capacity {
            node = storage + highWater
            highWater += 1
        } else {
            lock.unlock()
            return nil
        }
        node.initialize(to: WorkNode(next: nil, kind: kind, isBarrier: false, priority: priority,
                                     block: nil, object: object, group: nil))
        _ = handOut(node)
        return node
    }

    /// Destroys a node's contents and returns it to the pool.
    func release(_ node: WorkNodeRef) {
        node.deinitialize(count: 1)
        lock.lock()
        node.pointee.next = freeList  // raw link; the node is uninitialised memory now
        freeList = node
        inUse -= 1
        let wake = waiters > 0
        lock.unlock()
        if wake { freed.post(wake: Int32.max) }
    }

    private func take() -> WorkNodeRef {
        lock.lock()
        while true {
            if let node = freeList {
                freeList = node.pointee.next
                return handOut(node)
            }
            if highWater < capacity {
                let node = storage + highWater
                highWater += 1
                return handOut(node)
            }
            waitForFreedNode()
        }
    }

    /// Called with the lock held; returns with it held.
    private func handOut(_ node: WorkNodeRef) -> WorkNodeRef {
        inUse += 1
        if inUse > peakInUse { peakInUse = inUse }
        lock.unlock()
        return node
    }

    /// Invoked with the lock held; returns with it held. May sleep.
    private func waitForFreedNode() {
        waiters += 1
        exhaustionWaits += 1
        let seen = freed.snapshot
        let warnNow = !warned
        warned = true
        lock.unlock()
        let start = MonotonicClock.nanoseconds
        BlockingWait.perform(.nodePool) {
            while freed.snapshot == seen {
                if !freed.wait(ifUnchangedFrom: seen, timeoutNanoseconds: Self.exhaustionWarningDelay) {
                    if warnNow, MonotonicClock.nanoseconds - start >= UInt64(Self.exhaustionWarningDelay) {
                        ringletWarning("the work-node pool is full (\(capacity) nodes, configuration key "
                            + "'workNodes'); submitters are waiting for running items to finish. "
                            + "Raise 'workNodes' in the board profile or submit less work at once.")
                        return
                    }
                }
            }
        }
        lock.lock()
        waiters -= 1
    }
}
