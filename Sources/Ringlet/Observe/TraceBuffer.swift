/// What the trace records (Observing, "The trace timeline"). Each kind is written as
/// one Chrome trace event by `TraceJSON`.
enum TraceEventKind: UInt8 {
    /// An item, work item or job was queued: subject = queue number, priority.
    case enqueued = 1
    /// An item began to run on this thread: subject = queue number, priority, aux =
    /// `TraceItemKind`. Written as "B".
    case started = 2
    /// The item begun last on this thread returned. Written as "E".
    case finished = 3
    /// A worker found nothing it may run and parked on its futex.
    case parked = 4
    /// A parked worker was woken.
    case woke = 5
    /// The manager returned from its wait in the kernel.
    case managerWoke = 6
    /// The manager fired a coalesced timer window: arg = timers fired.
    case timerWindow = 7
    /// A source's kernel event reached the manager: aux = `TraceSourceKind`,
    /// subject = fd or signal number.
    case sourceEvent = 8
    /// DispatchIO put a read or write on the ring: subject = fd, value = bytes asked,
    /// aux = 1 for a write.
    case ioSubmitted = 9
    /// A DispatchIO request completed: subject = fd, value = the kernel's result.
    case ioCompleted = 10
    /// `Task.sleep` armed a window: value = the delay in nanoseconds.
    case sleepArmed = 11
    /// A `Task.sleep` window was reached on the manager.
    case sleepReached = 12
}

/// What ran between a `started` and its `finished` (the `kind` of the trace event's args).
enum TraceItemKind: UInt16 {
    case block = 0, workItem, sourceHandler, syncBlock, job

    var name: String {
        switch self {
        case .block: return "block"
        case .workItem: return "workItem"
        case .sourceHandler: return "sourceHandler"
        case .syncBlock: return "syncBlock"
        case .job: return "job"
        }
    }
}

/// The source kinds the manager reports events for.
enum TraceSourceKind: UInt16 {
    case read = 0, write, process, fileSystem, signal, timer

    var name: String {
        switch self {
        case .read: return "read"
        case .write: return "write"
        case .process: return "process"
        case .fileSystem: return "fileSystem"
        case .signal: return "signal"
        case .timer: return "timer"
        }
    }
}

/// One thread's trace ring: a fixed number of 32-byte events, allocated when the
/// thread's context is made (only with tracing on, `RuntimeConfiguration.trace`), and
/// written by that thread alone — no lock, no allocation, no read-modify-write: four
/// relaxed stores and one release store of the count per event. When full it
/// overwrites its oldest events; the count it keeps says how many there were, so the
/// trace file can say how many were dropped.
///
/// An event is four words: the monotonic time in nanoseconds; kind | priority << 8 |
/// aux << 16 | arg << 32; a subject (queue number, fd); a value (bytes, delay).
///
/// The buffers are never freed: the recorder keeps them (and so a thread's events
/// outlive it) until the process exits.
// @unchecked Sendable: the owner thread writes through `TraceWords`; readers use the published count.
final class TraceBuffer: @unchecked Sendable {
    /// The lane's name in the trace ("worker 0 (high)", "manager", "main").
    let lane: String
    /// The kernel thread id, the trace's `tid`.
    let threadID: Int32
    /// Where the lane sorts (the manager first, then the workers, then other threads).
    let sortIndex: Int
    /// Events the ring holds (a power of two).
    let capacity: Int
    private let mask: UInt64
    private let words: UnsafeMutablePointer<UInt64>
    /// Events recorded since the start (the next slot is `count & mask`).
    private let countWord: UnsafeMutablePointer<UInt64>

    init(lane: String, threadID: Int32, sortIndex: Int, capacity: Int) {
        var rounded = 16
        while rounded < capacity { rounded <<= 1 }
        self.lane = lane
        self.threadID = threadID
        self.sortIndex = sortIndex
        self.capacity = rounded
        mask = UInt64(rounded - 1)
        words = .allocate(capacity: 4 * rounded)
        words.initialize(repeating: 0, count: 4 * rounded)
        countWord = .allocate(capacity: 1)
        countWord.initialize(to: 0)
    }

    /// Records one event now. Owner thread only.
    @inline(__always)
    func record(_ kind: TraceEventKind, priority: UInt8 = 0, aux: UInt16 = 0, arg: UInt32 = 0,
                subject: UInt64 = 0, value: UInt64 = 0) {
        let count = TraceWords.load(countWord)
        let slot = words + Int(truncatingIfNeeded: (count & mask) << 2)
        TraceWords.store(slot, MonotonicClock.nanoseconds)
        TraceWords.store(slot + 1, UInt64(kind.rawValue) | UInt64(priority) << 8 | UInt64(aux) << 16
                         | UInt64(arg) << 32)
        TraceWords.store(slot + 2, subject)
        TraceWords.store(slot + 3, value)
        TraceWords.publish(countWord, count &+ 1)
    }

    /// Events recorded since the start (any thread).
    var recorded: Int { Int(TraceWords.acquire(countWord)) }

    /// The events the ring still holds, oldest first, and how many older ones were
    /// overwritten. Any thread, while the owner records: events the owner overwrote
    /// during the copy are found by reading the count again and counted as dropped.
    func snapshot() -> (events: [TraceEvent], dropped: Int) {
        let end = TraceWords.acquire(countWord)
        let cap = UInt64(capacity)
        let start = end > cap ? end - cap : 0
        var events: [TraceEvent] = []
        events.reserveCapacity(Int(end - start))
        var index = start
        while index < end {
            let slot = words + Int(truncatingIfNeeded: (index & mask) << 2)
            let meta = TraceWords.load(slot + 1)
            events.append(TraceEvent(time: TraceWords.load(slot), meta: meta, subject: TraceWords.load(slot + 2),
                                     value: TraceWords.load(slot + 3)))
            index += 1
        }
        TraceWords.fence()
        let after = TraceWords.acquire(countWord)
        let firstIntact = after > cap ? after - cap : 0
        if firstIntact > start {
            events.removeFirst(Int(min(firstIntact, end) - start))
            return (events, Int(min(firstIntact, end)))
        }
        return (events, Int(start))
    }
}

/// One event read back from a ring.
struct TraceEvent {
    /// CLOCK_MONOTONIC nanoseconds.
    let time: UInt64
    let meta: UInt64
    let subject: UInt64
    let value: UInt64

    var kind: TraceEventKind? { TraceEventKind(rawValue: UInt8(truncatingIfNeeded: meta)) }
    var priority: QoSPriority { QoSPriority(packed: UInt8(truncatingIfNeeded: meta >> 8)) }
    var aux: UInt16 { UInt16(truncatingIfNeeded: meta >> 16) }
    var arg: UInt32 { UInt32(truncatingIfNeeded: meta >> 32) }
}
