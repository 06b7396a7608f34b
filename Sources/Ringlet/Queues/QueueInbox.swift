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
///   takes the chain itself, then decides the wake-up — unless a consumer is coming
///   (`consumer`): a serial queue's drainer is active, or the token that starts one is
///   already out, and that drain takes the chain before it stops. Producers that found
///   a node before theirs just link and return: the chain they joined is taken by the
///   first's walk or by the drainer.
/// - The consumer (any thread holding the queue's lock) takes `head`, walks the chain,
///   and ends it with a compare-and-swap of `tail` from the last node it saw to nil; a
///   failed swap means a producer got in after it, whose link it then waits for.
///
/// Why "first producer or coming consumer" cannot both miss a node: only a drain that
/// is ending clears `consumer`, and then takes `head`; the first producer stores `head`
/// and then reads `consumer` (all sequentially consistent). Either the producer reads a
/// consumer, and then its `head` is there when the drain looks, or it reads none and
/// takes the chain itself. Both may look; the lock orders them and the second finds
/// nothing. `consumer` is set (under the lock) only by a drain that has started and
/// will end so, or when a token is out whose drain will (`tokenIsOut`).
///
/// Cost: one exchange and one store per push (two more, and the queue's lock, for the
/// first of a chain when no drainer is active).
struct QueueInbox: ~Copyable {
    /// The newest node; nil when the inbox is empty.
    private let tail = Atomic<WorkNodeRef?>(nil)
    /// The oldest node not yet taken (stored by the first producer of a chain).
    private let head = Atomic<WorkNodeRef?>(nil)
    /// Who takes the chain before it stops: 0 none (the first producer takes it);
    /// `drainerRunning`; or `tokenOut | priority`, a serial queue's token is out at that
    /// priority and its drain has not started.
    private let consumer = Atomic<UInt8>(0)
    private static let drainerRunning: UInt8 = 0xFF
    private static let tokenOut: UInt8 = 0x80

    init() {}

    /// What a push leaves to its caller.
    enum Arrival {
        /// Behind other nodes, or left to the coming drain: nothing more to do (but a
        /// raise, `DispatchQueue.push`).
        case joined
        /// First in an empty inbox with no drain coming: take the lock, take the chain
        /// (`takeAll`) and decide the wake-up.
        case mustTake
    }

    /// Any thread: puts `node` at the end of the chain.
    @inline(__always)
    func push(_ node: WorkNodeRef) -> Arrival {
        node.pointee.next = nil
        // Sequentially consistent, like the loads of `consumer` after it: the
        // argument of `tokenIsOut` needs it (the same instruction as acquire-release
        // on x86-64 and AArch64).
        let previous = tail.exchange(node, ordering: .sequentiallyConsistent)
        #if DEBUG
        InboxHook.call(.exchanged(node: UInt(bitPattern: node), previous: UInt(bitPattern: previous)))
        #endif
        if let previous {
            NodeLink.store(previous, next: node)
            return .joined
        }
        head.store(node, ordering: .sequentiallyConsistent)
        return consumer.load(ordering: .sequentiallyConsistent) != 0 ? .joined : .mustTake
    }

    /// Whether no node waits here (a node in flight counts as waiting).
    var isEmpty: Bool { tail.load(ordering: .acquiring) == nil }

    /// Whether a drain will take the chain before it stops (a drainer runs, or a token
    /// that starts one is out); and, when only the token is out, its priority: a node
    /// more urgent than that must raise the queue itself (`DispatchQueue.push`).
    var coming: (any: Bool, tokenPriority: QoSPriority?) {
        // Sequentially consistent: pairs with `tokenIsOut`'s store and its look at
        // `tail` (`hasNodesAfterTokenMark`).
        let value = consumer.load(ordering: .sequentiallyConsistent)
        if value == 0 { return (false, nil) }
        return (true, value == Self.drainerRunning ? nil : QoSPriority(packed: value & ~Self.tokenOut))
    }

    /// The drainer of a serial queue starts (with the queue's lock held): from now on
    /// the first producer of a chain leaves it to this drainer.
    func drainerStarts() { consumer.store(Self.drainerRunning, ordering: .relaxed) }

    /// With the queue's lock held: a serial queue's token is out at `priority` and
    /// nothing is coming yet (or the token was raised): the drain it starts takes the
    /// chain, so producers from now on leave their nodes for it, without the lock.
    ///
    /// A producer that joined a chain while `consumer` still said nobody comes left
    /// its raise to the chain's first producer, which may read this mark later and
    /// leave the chain to the drain too. So the caller then looks for nodes that
    /// arrived meanwhile (`hasNodesAfterTokenMark`) and decides their raise itself:
    /// both sides are sequentially consistent, so either the joiner's push is seen
    /// here or the joiner reads the mark and raises for itself. Returns whether that
    /// look is needed: only when there was no mark before (joiners that read an
    /// earlier mark raised for themselves, against its priority).
    @discardableResult
    func tokenIsOut(at priority: QoSPriority) -> Bool {
        let value = consumer.load(ordering: .relaxed)
        guard value == 0 || value & Self.tokenOut != 0 && value != Self.drainerRunning else { return false }
        let marked = Self.tokenOut | priority.rawValue
        #if DEBUG
        InboxHook.call(.markingTokenOut)
        #endif
        if value != marked { consumer.store(marked, ordering: .sequentiallyConsistent) }
        return value == 0
    }

    /// After `tokenIsOut`, with the queue's lock held: whether nodes wait here. When
    /// the first producer of their chain has swapped itself in but not yet stored
    /// `head`, waits for that store (a few instructions away), so that `takeAll` finds
    /// the chain.
    func hasNodesAfterTokenMark() -> Bool {
        guard tail.load(ordering: .sequentiallyConsistent) != nil else { return false }
        var attempts = 0
        while head.load(ordering: .sequentiallyConsistent) == nil { Self.backOff(&attempts) }
        return true
    }

    /// With the queue's lock held: the token marked out was not pushed after all
    /// (`DispatchQueue.tokenNotPushed`) and none is left. The caller takes the chain
    /// right after, as a stopping drainer does. A running drainer's mark stays.
    func noTokenOut() {
        let value = consumer.load(ordering: .relaxed)
        if value & Self.tokenOut != 0 && value != Self.drainerRunning {
            consumer.store(0, ordering: .sequentiallyConsistent)
        }
    }

    /// The drainer stops (with the queue's lock held); it takes the chain right after.
    func drainerStops() { consumer.store(0, ordering: .sequentiallyConsistent) }

    /// The consumer, with the queue's lock held: takes the nodes pushed so far, at most
    /// `limit` of them, shows each to `body` oldest first, and returns them as the chain
    /// they already form (linked through `next`, the last one's nil); nil when there was
    /// none. Nodes past `limit` stay here, in order, for the next take: `head` is the
    /// consumer's to store while the inbox is not empty, since a producer stores it only
    /// into an empty one.
    @inline(__always)
    func takeAll(upTo limit: Int = .max,
                 _ body: (WorkNodeRef) -> Void) -> (first: WorkNodeRef, last: WorkNodeRef, count: Int)? {
        // A load first, as draining checks often and mostly finds nothing. It must be
        // sequentially consistent, not relaxed: a stopping drainer's store to
        // `consumer` and this load pair with a first producer's store to `head` and
        // its load of `consumer` (the type's comment). A relaxed load may be
        // satisfied before that store on AArch64 (STLR then LDR), so both would miss the
        // chain and the queue would stall for ever; on x86-64 it is a plain load either way.
        guard head.load(ordering: .sequentiallyConsistent) != nil,
              let first = head.exchange(nil, ordering: .sequentiallyConsistent) else { return nil }
        var node = first
        var count = 1
        while true {
            var next = NodeLink.load(node)
            if next == nil {
                if tail.compareExchange(expected: node, desired: nil, ordering: .acquiringAndReleasing).exchanged {
                    body(node)
                    return (first, node, count)
                }
                // A producer swapped itself in after `node` and has not linked yet.
                next = Self.waitForLink(node)
            }
            body(node)
            if count == limit {
                node.pointee.next = nil
                head.store(next, ordering: .sequentiallyConsistent)
                return (first, node, count)
            }
            node = next.unsafelyUnwrapped
            count += 1
        }
    }

    /// The nodes waiting in the inbox, counted without taking them and without waiting
    /// for a producer that has not linked its node yet (those are left out), and the
    /// first of them. For the live dump: under the queue's lock, so no consumer takes
    /// nodes meanwhile, and producers only link after the last node.
    func peek() -> (first: WorkNodeRef?, count: Int) {
        guard let first = head.load(ordering: .sequentiallyConsistent) else { return (nil, 0) }
        var count = 1
        var node = first
        while let next = NodeLink.load(node) {
            count += 1
            node = next
        }
        return (first, count)
    }

    /// Waits for the producer that follows `node` to link it: spins briefly, yields the
    /// processor (the producer may be preempted, or on this very core), then sleeps
    /// between looks (`backOff`).
    @inline(never)
    private static func waitForLink(_ node: WorkNodeRef) -> WorkNodeRef {
        var attempts = 0
        while true {
            if let next = NodeLink.load(node) { return next }
            #if DEBUG
            InboxHook.call(.waitingForLink(after: UInt(bitPattern: node)))
            #endif
            backOff(&attempts)
        }
    }

    /// One round of waiting for a producer a few instructions from its next store: a
    /// spin hint at first, then the processor given up (the producer may be preempted),
    /// then sleeps from 32 µs doubling to 1 ms. A yield does not make the kernel run the
    /// producer: it may wait on another core's run queue, or be a background worker at
    /// SCHED_IDLE that a yield from this thread does not let in, and a waiter that only
    /// yielded spent a whole core, with the queue's lock held, for as long as the
    /// producer was kept off (QueueInboxTests).
    private static func backOff(_ attempts: inout Int) {
        if attempts < 64 {
            ThreadControl.spinHint()
        } else if attempts < 128 {
            ThreadControl.yieldProcessor()
        } else {
            ThreadControl.nap(nanoseconds: 32_000 << UInt64(min(attempts - 128, 5)))
        }
        attempts += 1
    }
}

#if DEBUG
/// A test hook on the inbox's windows: a producer between its exchange and its link,
/// a consumer waiting for such a link, and the token mark about to be stored. A test
/// installs a closure that may hold the thread to make the window as long as it likes.
enum InboxHook {
    enum Point: Sendable {
        /// A producer swapped `node` in after `previous` (0: the inbox was empty) and
        /// has not linked it yet.
        case exchanged(node: UInt, previous: UInt)
        /// A consumer found `after` the last linked node while `tail` is further on.
        case waitingForLink(after: UInt)
        /// The lock holder is about to mark a serial queue's token out.
        case markingTokenOut
    }

    static let hook = TestHook<Point, Void>()

    static func call(_ point: Point) { _ = hook.call(point) }
}
#endif
