/// Where a work item came from, in 64 bits carried by its node (`WorkNode.crumb`):
/// the *origin* — the queue whose item submitted it, or the thread that did when it
/// ran no item — and an *activity*: an identifier that every item submitted from
/// inside an item inherits, the way activity tracing follows a request across
/// asynchronous hops, with the count of hops since it began.
///
///   bits 63...32  origin: a queue's number (`DispatchQueue.number`, 1...), or
///                 bit 31 set + a thread id (a thread outside any item); 0 unknown
///   bit  31       boosted: the activity serves an urgent request (`Importance`)
///   bits 30...24  hops since the activity began (saturating at 127)
///   bits 23...0   the activity's id (`ActivityTable`)
///
/// Cost on the hot path: `ThreadContext.enter` computes the crumb that items
/// submitted from the running item will carry (a load from the queue, a few ALU
/// operations, two stores), and `WorkNodePool.allocate` copies it into the node: no
/// allocation, no lock, no atomic read-modify-write. Names are looked up only when a
/// dump, a report or a trap prints the chain.
struct Breadcrumb: Equatable {
    let raw: UInt64

    init(raw: UInt64) { self.raw = raw }

    init(node: WorkNodeRef) { raw = node.pointee.crumb }

    init(origin: UInt32, activity: UInt32, hops: UInt32) {
        raw = UInt64(origin) << 32 | UInt64(min(hops, 127) << 24 | (activity & 0xFF_FFFF))
    }

    static let unknown = Breadcrumb(raw: 0)
    static let threadBit: UInt32 = 0x8000_0000

    var origin: UInt32 { UInt32(truncatingIfNeeded: raw >> 32) }
    var activity: UInt32 { UInt32(truncatingIfNeeded: raw) & 0xFF_FFFF }
    var hops: UInt32 { UInt32(truncatingIfNeeded: raw) >> 24 & 0x7F }
    var isBoosted: Bool { raw & Importance.boostBit != 0 }

    /// The crumb of an item submitted from an item that carries this one, running on
    /// the queue numbered `queueNumber`: one more hop of the same activity (boosted
    /// when this one is).
    @inline(__always)
    func submitted(fromQueue queueNumber: UInt32) -> UInt64 {
        let low = UInt32(truncatingIfNeeded: raw)
        let next = low >> 24 & 0x7F == 0x7F ? low : low &+ (1 << 24)
        return UInt64(queueNumber) << 32 | UInt64(next)
    }

    /// A thread's own crumb, for what it submits outside any item: a new activity
    /// begun at the thread, one hop.
    static func forThread(id threadID: Int32) -> UInt64 {
        let origin = threadBit | (UInt32(bitPattern: threadID) & 0x7FFF_FFFF)
        let activity = ActivityTable.shared.begin(at: origin)
        return Breadcrumb(origin: origin, activity: activity, hops: 1).raw
    }

    // MARK: Printing

    /// "enqueued from 'sensor.read' ← thread main (activity 3)", or nil when unknown.
    /// Takes the queue registry's lock (or only tries it, with `tryOnly`, from a trap
    /// that may hold it).
    func chainDescription(tryOnly: Bool = false) -> String? {
        if raw == 0 { return nil }
        var text = "enqueued from " + Self.name(of: origin, tryOnly: tryOnly)
        let root = ActivityTable.shared.root(of: activity)
        if hops >= 2, let root {
            text += hops == 2 ? " ← " : " ← … ← "
            text += Self.name(of: root, tryOnly: tryOnly)
            if hops > 2 { text += " (\(hops) hops)" }
        }
        return text + " (activity \(activity))"
    }

    /// "'label'", "thread main", "thread <name>", or what is known of a gone origin.
    static func name(of origin: UInt32, tryOnly: Bool = false) -> String {
        if origin == 0 { return "an unknown origin" }
        if origin & threadBit != 0 {
            let id = Int32(bitPattern: origin & 0x7FFF_FFFF)
            if id == ThreadControl.processID { return "thread main" }
            if let name = ThreadControl.threadName(id) { return "thread \(name)" }
            return "thread \(id) (gone, or of another process)"
        }
        if let found = QueueRegistry.shared.label(ofQueueNumbered: origin, tryOnly: tryOnly) {
            return found.live ? "'\(found.label)'" : "'\(found.label)' (released since)"
        }
        return "queue #\(origin) (released)"
    }
}

/// Where each activity began, so a chain can name its first step. An activity begins
/// once per thread (for what it submits outside any item); ids are 24 bits and wrap,
/// and the table keeps the last `capacity` beginnings — an older one prints without
/// its start.
// @unchecked Sendable: `roots` and `next` under `lock`.
final class ActivityTable: @unchecked Sendable {
    static let shared = ActivityTable()
    static let capacity = 1024
    private let lock = FutexLock()
    private var roots = [UInt64](repeating: 0, count: ActivityTable.capacity)
    private var next: UInt32 = 1

    /// A new activity id, begun at `origin`. Takes the lock (once per thread).
    func begin(at origin: UInt32) -> UInt32 {
        lock.withLock {
            let id = next
            next = next == 0xFF_FFFF ? 1 : next + 1
            roots[Int(id) % Self.capacity] = UInt64(id) << 32 | UInt64(origin)
            return id
        }
    }

    /// The origin activity `id` began at, if the table still remembers it.
    func root(of id: UInt32) -> UInt32? {
        if id == 0 { return nil }
        let entry = lock.withLock { roots[Int(id) % Self.capacity] }
        return UInt32(truncatingIfNeeded: entry >> 32) == id ? UInt32(truncatingIfNeeded: entry) : nil
    }
}
