import Synchronization

/// The lock-free front of a queue's FIFO: `async` puts its node here without taking the
/// queue's lock, and whoever holds the lock later moves the nodes into the FIFO in push
/// order (Architecture, "The path of a work item").
///
/// A multi-producer, single-consumer chain after the technique of libdispatch's
/// os_mpsc (queue_internal.h, `os_mpsc_push_list` / `os_mpsc_pop_snapshot_head`):
///
/// - A producer clears its node's `next`, swaps it into `tail` (one atomic exchange, so
///   no producer ever retries) and links the previous tail's `next` to it. Between the
///   exchange and the link the chain is broken: the consumer that reaches the previous
///   node waits for the link (`waitForLink`), so nothing is lost or reordered.
/// - The producer that found the inbox empty ("the first") also stores `head`, and is
///   the one that must see the chain taken into the FIFO: it takes the queue's lock and
///   takes the chain itself, then decides the wake-up — unless a serial queue's drainer
///   is active (`drainerActive`), which takes the chain before it stops. Producers that
///   found a node before theirs just link and return: the chain they joined is taken by
///   the first's walk or by the drainer.
/// - The consumer (any thread holding the queue's lock) takes `head`, walks the chain,
///   and ends it with a compare-and-swap of `tail` from the last node it saw to nil; a
///   failed swap means a producer got in after it, whose link it then waits for.
///
/// Why "first producer or active drainer" cannot both miss a node: the drainer clears
/// `drainerActive` and then takes `head`; the first producer stores `head` and then
/// reads `drainerActive` (all sequentially consistent). Either the producer reads true,
/// and then its `head` is there when the drainer looks, or it reads false and takes the
/// chain itself. Both may look; the lock orders them and the second finds nothing.
///
/// Cost: one exchange and one store per push (two more, and the queue's lock, for the
/// first of a chain when no drainer is active).
struct QueueInbox: ~Copyable {
    /// The newest node; nil when the inbox is empty.
    private let tail = Atomic<WorkNodeRef?>(nil)
    /// The oldest node not yet taken (stored by the first producer of a chain).
    private let head = Atomic<WorkNodeRef?>(nil)
    /// A serial queue's drainer runs and takes the chain before it stops.
    private let drainerActive = Atomic<Bool>(false)

    init() {}

    /// What a push leaves to its caller.
    enum Arrival {
        /// Behind other nodes, or left to the active drainer: nothing more to do.
        case joined
        /// First in an empty inbox with no drainer: take the lock, take the chain
        /// (`takeAll`) and decide the wake-up.
        case mustTake
    }

    /// Any thread: puts `node` at the end of the chain.
    @inline(__always)
    func push(_ node: WorkNodeRef) -> Arrival {
        node.pointee.next = nil
        let previous = tail.exchange(node, ordering: .acquiringAndReleasing)
        #if DEBUG
        InboxHook.call(.exchanged(node: UInt(bitPattern: node), previous: UInt(bitPattern: previous)))
        #endif
        if let previous {
            NodeLink.store(previous, next: node)
            return .joined
        }
        head.store(node, ordering: .sequentiallyConsistent)
        return drainerActive.load(ordering: .sequentiallyConsistent) ? .joined : .mustTake
    }

    /// Whether no node waits here (a node in flight counts as waiting).
    var isEmpty: Bool { tail.load(ordering: .acquiring) == nil }

    /// Whether a serial queue's drainer will take the chain before it stops.
    var hasActiveDrainer: Bool { drainerActive.load(ordering: .relaxed) }

    /// The drainer of a serial queue starts (with the queue's lock held): from now on
    /// the first producer of a chain leaves it to this drainer.
    func drainerStarts() { drainerActive.store(true, ordering: .relaxed) }

    /// The drainer stops (with the queue's lock held); it takes the chain right after.
    func drainerStops() { drainerActive.store(false, ordering: .sequentiallyConsistent) }

    /// The consumer, with the queue's lock held: hands every node pushed so far to
    /// `body`, oldest first. Returns false when there was none.
    @inline(__always)
    func takeAll(_ body: (WorkNodeRef) -> Void) -> Bool {
        // A load first, as draining checks often and mostly finds nothing. It must be
        // sequentially consistent, not relaxed: a stopping drainer's store to
        // `drainerActive` and this load pair with a first producer's store to `head` and
        // its load of `drainerActive` (the type's comment). A relaxed load may be
        // satisfied before that store on AArch64 (STLR then LDR), so both would miss the
        // chain and the queue would stall for ever; on x86-64 it is a plain load either way.
        guard head.load(ordering: .sequentiallyConsistent) != nil,
              var node = head.exchange(nil, ordering: .sequentiallyConsistent) else { return false }
        while true {
            var next = NodeLink.load(node)
            if next == nil {
                if tail.compareExchange(expected: node, desired: nil, ordering: .acquiringAndReleasing).exchanged {
                    body(node)
                    return true
                }
                // A producer swapped itself in after `node` and has not linked yet.
                next = Self.waitForLink(node)
            }
            body(node)
            node = next.unsafelyUnwrapped
        }
    }

    /// Waits for the producer that follows `node` to link it: spins briefly, then
    /// yields the processor (the producer may be preempted, or on this very core).
    @inline(never)
    private static func waitForLink(_ node: WorkNodeRef) -> WorkNodeRef {
        var attempts = 0
        while true {
            if let next = NodeLink.load(node) { return next }
            #if DEBUG
            InboxHook.call(.waitingForLink(after: UInt(bitPattern: node)))
            #endif
            if attempts < 64 { ThreadControl.spinHint() } else { ThreadControl.yieldProcessor() }
            attempts += 1
        }
    }
}

#if DEBUG
/// A test hook on the inbox's two windows: a producer between its exchange and its
/// link, and a consumer waiting for such a link. Debug builds only; a test installs a
/// closure that may block the producer to make the window as long as it likes.
enum InboxHook {
    enum Point: Sendable {
        /// A producer swapped `node` in after `previous` (0: the inbox was empty) and
        /// has not linked it yet.
        case exchanged(node: UInt, previous: UInt)
        /// A consumer found `after` the last linked node while `tail` is further on.
        case waitingForLink(after: UInt)
    }

    private static let installed = Atomic<Bool>(false)
    private static let lock = FutexLock()
    nonisolated(unsafe) private static var hook: (@Sendable (Point) -> Void)?

    static func install(_ newHook: (@Sendable (Point) -> Void)?) {
        lock.withLock { hook = newHook }
        installed.store(newHook != nil, ordering: .releasing)
    }

    static func call(_ point: Point) {
        guard installed.load(ordering: .acquiring) else { return }
        let current = lock.withLock { hook }
        current?(point)
    }
}
#endif
