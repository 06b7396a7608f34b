import Synchronization

/// A process clamped to a QoS — a background service — and the boosts that lift the
/// clamp for the work of an urgent request (the Services article; the 2014 talk's
/// importance boosting).
///
/// **The clamp.** While `clamp` is set, every closure, work item and job submitted to
/// a queue other than the main queue runs at most at the clamp's class, so a
/// background service's ordinary work runs on the background band's workers
/// (SCHED_IDLE or nice 19). Queues marked `isImportanceExempt` (a service's own
/// receive lane) are not clamped.
///
/// **A boost.** An activity marked boosted (bit 31 of its `Breadcrumb`): its items
/// escape the clamp and run at the QoS GCD's rules give them — the request's — on the
/// workers of that band, threads that kept their priority since start. That is how an
/// unprivileged process raises work: Linux does not let a thread lower its nice value
/// again, so the work moves to threads that were never demoted. What a boosted item
/// submits carries the mark too (it is part of the crumb each hop copies), unless
/// submitted `.detached`.
///
/// **How long.** Each boosted node holds a reference from its allocation until the
/// pool takes it back, each boosted item another while it runs (`ThreadContext.enter`
/// to `restore`), and a service one per request until its reply is sent
/// (`ImportanceBoost`): the process counts as boosted while any is held
/// (`RuntimeStatistics.boostReferences`). Cost without a clamp or a boost: one test of
/// the crumb's bit and one relaxed load per submission, one test per item run.
enum Importance {
    /// The crumb's boosted mark (`Breadcrumb.isBoosted`).
    static let boostBit: UInt64 = 1 << 31

    /// The clamp's packed priority (its class, relative priority 0), 0: no clamp.
    private static let clampWord = Atomic<UInt8>(0)
    private static let references = Atomic<Int>(0)
    private static let begun = Atomic<Int>(0)
    private static let clampedItems = Atomic<Int>(0)

    static var clamp: QoSLevel? {
        let raw = clampWord.load(ordering: .relaxed)
        return raw == 0 ? nil : QoSPriority(packed: raw).level
    }

    static func setClamp(_ level: QoSLevel?) {
        let raw = level.map { QoSPriority(level: $0, relativePriority: 0).rawValue } ?? 0
        clampWord.store(raw, ordering: .relaxed)
    }

    static var boostReferences: Int { references.load(ordering: .relaxed) }
    static var boostsBegun: Int { begun.load(ordering: .relaxed) }
    static var itemsClamped: Int { clampedItems.load(ordering: .relaxed) }

    /// The priority a submission from `context` at `priority` runs at: the clamp's when
    /// the clamp is lower and the submission is neither boosted nor exempt.
    @inline(__always)
    static func admitted(_ priority: QoSPriority, context: ThreadContext, exempt: @autoclosure () -> Bool = false,
                         detached: Bool = false) -> QoSPriority {
        let clampRaw = clampWord.load(ordering: .relaxed)
        if clampRaw == 0 || priority.rawValue <= clampRaw || exempt() { return priority }
        if context.submitCrumb & boostBit != 0 && !detached { return priority }
        return clamped(clampRaw)
    }

    @inline(never)
    private static func clamped(_ raw: UInt8) -> QoSPriority {
        clampedItems.add(1, ordering: .relaxed)
        return QoSPriority(packed: raw)
    }

    /// The crumb a node allocated from `context` carries: boosted nodes of items hold
    /// a reference; tokens and detached items drop the mark.
    @inline(__always)
    static func nodeCrumb(_ crumb: UInt64, kind: WorkNode.Kind, detached: Bool) -> UInt64 {
        if crumb & boostBit == 0 { return crumb }
        return holdForNode(crumb, kind: kind, detached: detached)
    }

    @inline(never)
    private static func holdForNode(_ crumb: UInt64, kind: WorkNode.Kind, detached: Bool) -> UInt64 {
        switch kind {
        case .block, .workItem, .job, .syncWaiter:
            if detached { return crumb & ~boostBit }
            retain()
            return crumb
        case .queueToken, .sourceNode:
            return crumb & ~boostBit
        }
    }

    @inline(never)
    static func retain() { references.add(1, ordering: .relaxed) }

    @inline(never)
    static func release() {
        let (before, _) = references.subtract(1, ordering: .relaxed)
        if before <= 0 { ringletBug("Importance.release: more boost references released than held") }
    }

    static func countBegun() { begun.add(1, ordering: .relaxed) }
}

/// A boost held by a service for one request (`Runtime.beginBoost`): a reference until
/// `end()` — the reply sent — and the mark on what is submitted inside
/// `submitBoosted`. Ending twice is harmless; a boost dropped without `end()` ends then.
@_spi(RingletNet)
public final class ImportanceBoost: @unchecked Sendable {
    private let held = Atomic<Bool>(true)

    init() {
        Importance.countBegun()
        Importance.retain()
    }

    deinit { end() }

    /// Runs `body` with what the calling thread submits marked boosted: those items
    /// escape the process's clamp and run at their own QoS; what they submit, too.
    /// (Not generic: Embedded Swift cannot call an unspecialised generic entry point.)
    public func submitBoosted(_ body: () -> Void) {
        let context = ThreadContext.current
        let saved = context.submitCrumb
        context.submitCrumb = saved | Importance.boostBit
        body()
        context.submitCrumb = saved
    }

    /// Drops this boost's own reference (the items it marked keep theirs).
    public func end() {
        if held.exchange(false, ordering: .relaxed) { Importance.release() }
    }
}
