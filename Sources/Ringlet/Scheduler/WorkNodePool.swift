import Synchronization

/// The fixed pool every work node comes from, sized once at start by the
/// configuration key `workNodes` (the runtime's memory is fixed at start).
///
/// Each thread keeps a small cache of free nodes (in its `ThreadContext`) and trades
/// with the shared free list in batches, so a producer and a drainer on different
/// cores do not contend on one lock per item. Nodes are first handed out from a
/// high-water mark into memory never used before, so the pages of a large pool are
/// touched only when that many items are pending at once.
///
/// When the pool is empty the submitter waits (a Ringlet wait, so a reserve worker
/// may cover it) until nodes are freed: nothing is dropped. Waiters are woken once a
/// good share of the pool is free (`wakeThreshold`), or as soon as a thread that
/// returns nodes is about to go idle or block: then no more nodes may come back soon,
/// so whatever is free must do — nodes held for long (asyncAfter items not yet due,
/// DispatchIO operations) can keep the free count below the threshold for ever.
/// After a second of waiting it prints one warning naming the pool, what holds its
/// nodes and the key that sizes it. Workers give their cache back before they park,
/// so an idle thread never holds nodes hostage.
///
/// Before that, a backlog slows its producers: while more than `backlogYieldNodes`
/// nodes are out, a thread that refills its cache yields the processor once
/// (sched_yield(2), once per `batchSize` items). On a board with fewer cores than
/// producing threads, the producers otherwise keep the drainers off the processors,
/// the backlog grows past the caches, and every node the drainer reaches is a cache
/// miss; with the yield the backlog stays small and an item's cost steady (Measuring,
/// "A backlog slows its producers"). With a core free for every runnable thread the
/// yield returns at once. The manager thread never yields: the backlog may be waiting
/// for its timers and completions.
// @unchecked Sendable: shared state under `lock`; each thread's cache is its own (ThreadContext).
final class WorkNodePool: @unchecked Sendable {
    let capacity: Int
    /// Most nodes a thread caches; it returns half when it holds more.
    let cacheLimit: Int
    /// Free nodes needed before waiting submitters are woken.
    let wakeThreshold: Int
    private let storage: UnsafeMutablePointer<WorkNode>
    // Made after the memory is reserved: a throwing initialiser runs no deinit.
    private let lock: FutexLock
    private let freed: FutexEvent
    // Under `lock`:
    /// Free nodes as chains of at most `batchSize` (linked through `next`), so a
    /// refill takes a whole chain without walking nodes another core last touched.
    private var freeChains: [(head: WorkNodeRef, count: Int)] = []
    private var highWater = 0
    private var waiters = 0
    /// `waiters > 0`, readable without the lock (a parking worker looks at it).
    private let hasWaiters = Atomic<Bool>(false)
    private var warned = false
    /// Nodes outside the shared free list: in use, or cached by a thread.
    private var outstanding = 0
    private var peakOutstanding = 0
    private var waits = 0
    private var backlogYields = 0

    /// Nodes out beyond which a refilling thread yields: 768 KiB of 48-byte nodes,
    /// within the last-level cache of the boards' cores (512 KiB-2 MiB).
    static let backlogYieldNodes = 16_384
    static let exhaustionWarningDelay: Int64 = 1_000_000_000

    /// Reserves the pool's memory (touched only as nodes are first used). Throws,
    /// naming `workNodes` and the bytes, when the system refuses it.
    init(capacity: Int) throws(RuntimeError) {
        precondition(capacity > 0)
        self.capacity = capacity
        cacheLimit = max(2, min(128, capacity / 64))
        wakeThreshold = max(cacheLimit / 2, min(capacity / 16, 4096))
        let bytes = UInt64(capacity) * UInt64(MemoryLayout<WorkNode>.stride)
        guard let memory = Memory.reserve(bytes) else {
            throw RuntimeError.memoryRefused(key: "workNodes", value: capacity, bytes: Int(bytes),
                                             addressSpaceLimit: Memory.addressSpaceLimit)
        }
        storage = memory.bindMemory(to: WorkNode.self, capacity: capacity)
        lock = FutexLock()
        freed = FutexEvent()
        freeChains.reserveCapacity(capacity / max(1, cacheLimit / 2) + 64)
    }

    deinit {
        lock.deallocate()
        freed.deallocate()
        Memory.release(storage, bytes: UInt64(capacity) * UInt64(MemoryLayout<WorkNode>.stride))
    }

    /// Nodes in use or cached by threads (at most `cacheLimit` per thread).
    var inUse: Int { lock.withLock { outstanding } }
    var peakInUse: Int { lock.withLock { peakOutstanding } }
    /// How many times a submitter had to wait for a node.
    var exhaustionWaits: Int { lock.withLock { waits } }
    /// How many times a thread refilling its cache yielded to a backlog.
    var backlogYieldCount: Int { lock.withLock { backlogYields } }

    /// Takes a node and initialises it. Waits while the pool is empty.
    @inline(__always)
    func allocate(kind: WorkNode.Kind, priority: QoSPriority, isBarrier: Bool = false,
                  block: (() -> Void)? = nil, object: AnyObject? = nil,
                  group: DispatchGroup? = nil, context: ThreadContext = .current,
                  detached: Bool = false) -> WorkNodeRef {
        let node = context.nodeCache ?? refill(context, wait: true).unsafelyUnwrapped
        context.nodeCache = node.pointee.next
        context.nodeCacheCount -= 1
        let crumb = Importance.nodeCrumb(context.submitCrumb, kind: kind, detached: detached)
        node.initialize(to: WorkNode.carrying(kind: kind, priority: priority, isBarrier: isBarrier, block: block,
                                              object: object, group: group, crumb: crumb))
        return node
    }

    /// Takes a node without waiting; nil when the pool is empty.
    func tryAllocate(kind: WorkNode.Kind, priority: QoSPriority, object: AnyObject?,
                     context: ThreadContext = .current) -> WorkNodeRef? {
        guard let node = context.nodeCache ?? refill(context, wait: false) else { return nil }
        context.nodeCache = node.pointee.next
        context.nodeCacheCount -= 1
        let crumb = Importance.nodeCrumb(context.submitCrumb, kind: kind, detached: false)
        node.initialize(to: WorkNode(next: nil, kind: kind, isBarrier: false, priority: priority,
                                     block: nil, object: object, crumb: crumb))
        return node
    }

    /// Destroys a node's contents and keeps it in the calling thread's cache.
    @inline(__always)
    func release(_ node: WorkNodeRef, context: ThreadContext) {
        if node.pointee.crumb & Importance.boostBit != 0 { Importance.release() }
        node.deinitialize(count: 1)
        keep(node, context: context)
    }

    /// Keeps a node whose references were all moved out (`takeBlock`, `takeObject`) in
    /// the calling thread's cache, without destroying its contents: what is left is
    /// plain bytes, and the destroy would only release two nils (two calls per item
    /// on the drain path).
    @inline(__always)
    func releaseTaken(_ node: WorkNodeRef, context: ThreadContext) {
        assert(node.pointee.block == nil && node.pointee.object == nil, "releaseTaken: the node still holds a reference")
        if node.pointee.crumb & Importance.boostBit != 0 { Importance.release() }
        keep(node, context: context)
    }

    /// Puts a node whose contents are destroyed (or were only plain bytes) in the
    /// calling thread's cache.
    @inline(__always)
    private func keep(_ node: WorkNodeRef, context: ThreadContext) {
        node.pointee.next = context.nodeCache  // raw link; the node is uninitialised memory
        context.nodeCache = node
        context.nodeCacheCount += 1
        if context.nodeCacheCount > cacheLimit { giveBack(context, keeping: context.nodeCacheCount - batchSize) }
    }

    var batchSize: Int { cacheLimit / 2 }

    /// Memory pressure at `.critical` (MemoryTrim): the free nodes at the top of the part
    /// of the pool used so far — above the highest node in use or cached by a thread —
    /// go back to the system (their whole pages, madvise), and the high-water mark drops
    /// to them, so they are handed out again as fresh memory when needed. The capacity
    /// stays. Walks the shared free list once, under the lock. Returns the bytes given back.
    func trim() -> Int {
        lock.lock()
        defer { lock.unlock() }
        if highWater == 0 || freeChains.isEmpty { return 0 }
        var free = [UInt64](repeating: 0, count: (highWater + 63) / 64)
        for chain in freeChains {
            var node = chain.head
            for step in 0..<chain.count {
                let index = storage.distance(to: node)
                free[index / 64] |= 1 << UInt64(index % 64)
                if step + 1 < chain.count { node = node.pointee.next.unsafelyUnwrapped }
            }
        }
        var top = highWater
        while top > 0 && free[(top - 1) / 64] & (1 << UInt64((top - 1) % 64)) != 0 { top -= 1 }
        if top == highWater { return 0 }
        let page = UInt(MachineFiles.pageBytes)
        let start = (UInt(bitPattern: storage + top) + page - 1) & ~(page - 1)
        let end = UInt(bitPattern: storage + highWater) & ~(page - 1)
        // The free list keeps the nodes below `top`, in chains of at most a batch.
        var kept: [(head: WorkNodeRef, count: Int)] = []
        var head: WorkNodeRef?, tail: WorkNodeRef?, count = 0
        for chain in freeChains {
            var node: WorkNodeRef? = chain.head
            for _ in 0..<chain.count {
                let current = node.unsafelyUnwrapped
                node = current.pointee.next
                if storage.distance(to: current) >= top { continue }
                if let last = tail { last.pointee.next = current } else { head = current }
                tail = current
                count += 1
                if count == batchSize {
                    current.pointee.next = nil
                    kept.append((head.unsafelyUnwrapped, count))
                    (head, tail, count) = (nil, nil, 0)
                }
            }
        }
        if let head, let tail {
            tail.pointee.next = nil
            kept.append((head, count))
        }
        freeChains = kept
        highWater = top
        guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start),
              Memory.giveBackPages(address, length: Int(end - start)) else { return 0 }
        return Int(end - start)
    }

    /// Returns all but `keeping` of the thread's cached nodes to the shared list, in
    /// chains of at most `batchSize`. `idling`: the thread is about to park or block,
    /// so waiting submitters are woken whatever is free.
    func giveBack(_ context: ThreadContext, keeping: Int = 0, idling: Bool = false) {
        var returning = context.nodeCacheCount - keeping
        if returning <= 0 {
            if idling { wakeWaitersIfAnyFree() }
            return
        }
        let returned = returning
        lock.lock()
        // The nodes are hot in this thread's cache: walking them here is cheap.
        while returning > 0 {
            let count = min(returning, batchSize)
            let head = context.nodeCache.unsafelyUnwrapped
            var last = head
            for _ in 1..<count { last = last.pointee.next.unsafelyUnwrapped }
            context.nodeCache = last.pointee.next
            last.pointee.next = nil
            freeChains.append((head, count))
            returning -= count
        }
        context.nodeCacheCount -= returned
        outstanding -= returned
        // Hysteresis: a submitter waiting for the pool is woken once a good share is
        // free, not for every returned chain, so a producer that outpaces its queue
        // sleeps and wakes once per thousands of items instead of once per chain —
        // unless this thread goes idle, after which nothing may come back for long.
        let wake = waiters > 0 && (capacity - outstanding >= wakeThreshold || idling)
        lock.unlock()
        if wake { freed.post(wake: Int32.max) }
    }

    /// Wakes waiting submitters when any node is free (a thread is going idle).
    func wakeWaitersIfAnyFree() {
        if !hasWaiters.load(ordering: .relaxed) { return }
        lock.lock()
        let wake = waiters > 0 && capacity > outstanding
        lock.unlock()
        if wake { freed.post(wake: Int32.max) }
    }

    /// Fills the thread's empty cache with one free chain, or with nodes never used
    /// before; returns its first node, or nil when the pool is empty and `wait` is false.
    @inline(never)
    private func refill(_ context: ThreadContext, wait: Bool) -> WorkNodeRef? {
        lock.lock()
        while true {
            var taken = 0
            if let chain = freeChains.popLast() {
                context.nodeCache = chain.head
                taken = chain.count
            } else if highWater < capacity {
                taken = min(batchSize, capacity - highWater)
                let first = storage + highWater
                for offset in 0..<taken {
                    (first + offset).pointee.next = offset + 1 < taken ? first + offset + 1 : nil
                }
                highWater += taken
                context.nodeCache = first
            }
            if taken > 0 {
                context.nodeCacheCount = taken
                outstanding += taken
                if outstanding > peakOutstanding { peakOutstanding = outstanding }
                let yieldNow = outstanding > Self.backlogYieldNodes && !context.isManager
                if yieldNow { backlogYields += 1 }
                lock.unlock()
                if yieldNow { ThreadControl.yieldProcessor() }
                return context.nodeCache
            }
            if !wait {
                lock.unlock()
                return nil
            }
            waitForFreedNodes()
        }
    }

    /// Invoked with the lock held; returns with it held. May sleep.
    private func waitForFreedNodes() {
        waiters += 1
        hasWaiters.store(true, ordering: .relaxed)
        waits += 1
        let seen = freed.snapshot
        let warnNow = !warned
        lock.unlock()
        let start = MonotonicClock.nanoseconds
        BlockingWait.perform(.nodePool) {
            var warnPending = warnNow
            while freed.snapshot == seen {
                let posted = BlockingWait.sleep(on: freed, seen: seen,
                                                timeoutNanoseconds: warnPending ? Self.exhaustionWarningDelay : -1)
                if !posted, warnPending, MonotonicClock.nanoseconds - start >= UInt64(Self.exhaustionWarningDelay) {
                    warnPending = false
                    // One warning per process, printed by the first wait that lasts.
                    if lock.withLock({ () -> Bool in
                        defer { warned = true }
                        return warned
                    }) { continue }
                    ringletWarning(exhaustionMessage())
                }
            }
        }
        lock.lock()
        waiters -= 1
        hasWaiters.store(waiters > 0, ordering: .relaxed)
    }

    /// What the warning of a long wait says: the pool, what holds its nodes, the key.
    private func exhaustionMessage() -> String {
        let totals = CounterRegistry.shared.totals()
        var pending = 0
        for level in QoSLevel.allLevels { pending += totals.submitted[level.rawValue] - totals.ran[level.rawValue] }
        let timers = RuntimeParts.shared.manager.takeUnretainedValue().counters.armedTimers
        let cached = lock.withLock { outstanding } - max(pending, 0)
        return "the work-node pool is full (\(capacity) nodes, configuration key 'workNodes'); a submitter has "
            + "waited \(Self.exhaustionWarningDelay / 1_000_000_000) s. What holds the nodes: about \(max(pending, 0)) "
            + "submitted items not yet run (items waiting in queues, asyncAfter items not yet due among the "
            + "\(timers) armed timers, DispatchIO deliveries) and about \(max(cached, 0)) free nodes cached by threads. "
            + "Nodes come back as items run. Raise 'workNodes' in the board profile "
            + "(\(MemoryLayout<WorkNode>.stride) bytes each), or submit less work at once."
    }
}
