// The soak workload: producers submit items through every kind of submission Ringlet
// has (serial, concurrent and global queues, random QoS, groups, barriers, work items
// some of which are cancelled, asyncAfter, sync), and a ledger proves that each item
// ran exactly once, in order on serial queues, alone when a barrier. Imports Ringlet,
// never Dispatch or Foundation.
import Glibc
import Ringlet
import Synchronization

/// One bit per item: set when the item runs (a second set is a duplicate), and one
/// bit per item that was cancelled (it may or may not run, but is notified once).
final class SoakLedger: @unchecked Sendable {
    let items: Int
    private let words: Int
    private let ran: UnsafeMutablePointer<Atomic<UInt64>>
    private let cancelled: UnsafeMutablePointer<Atomic<UInt64>>
    let duplicates = Atomic<Int>(0)
    let notifications = Atomic<Int>(0)
    let orderViolations = Atomic<Int>(0)
    let barrierViolations = Atomic<Int>(0)
    let ranCount = Atomic<Int>(0)
    let cancelledCount = Atomic<Int>(0)

    init(items: Int) {
        self.items = items
        words = items / 64 + 1
        ran = .allocate(capacity: words)
        cancelled = .allocate(capacity: words)
        for index in 0..<words {
            (ran + index).initialize(to: Atomic(0))
            (cancelled + index).initialize(to: Atomic(0))
        }
    }

    /// Bytes the ledger itself holds (not the runtime's).
    var bytes: Int { 2 * words * 8 }

    func markRan(_ id: Int) {
        let bit: UInt64 = 1 << UInt64(id & 63)
        let old = ran[id >> 6].bitwiseOr(bit, ordering: .relaxed).oldValue
        if old & bit != 0 { duplicates.wrappingAdd(1, ordering: .relaxed) }
        ranCount.wrappingAdd(1, ordering: .relaxed)
    }

    func markCancelled(_ id: Int) {
        _ = cancelled[id >> 6].bitwiseOr(1 << UInt64(id & 63), ordering: .relaxed)
        cancelledCount.wrappingAdd(1, ordering: .relaxed)
    }

    /// Items neither run nor cancelled, and cancelled items that ran anyway (allowed:
    /// cancel() does not stop an item that has started).
    func tally() -> (lost: Int, cancelledRan: Int, firstLost: Int?) {
        var lost = 0, cancelledRan = 0
        var firstLost: Int?
        for index in 0..<words {
            let r = ran[index].load(ordering: .relaxed), c = cancelled[index].load(ordering: .relaxed)
            var missing = ~(r | c)
            if index == words - 1 { missing &= (items % 64 == 0) ? 0 : (1 << UInt64(items % 64)) - 1 }
            if missing != 0, firstLost == nil { firstLost = index * 64 + missing.trailingZeroBitCount }
            lost += missing.nonzeroBitCount
            cancelledRan += (r & c).nonzeroBitCount
        }
        return (lost, cancelledRan, firstLost)
    }

    /// Every item has run, or was cancelled and notified.
    var settled: Bool {
        tally().lost == 0 && notifications.load(ordering: .relaxed) >= cancelledCount.load(ordering: .relaxed)
    }
}

/// A serial queue with, per producer, the sequence number of the last item that ran:
/// only the queue's own items touch it, which the queue serialises.
final class SoakSerialQueue: @unchecked Sendable {
    let queue: DispatchQueue
    private var last: [Int]

    init(index: Int, producers: Int) {
        queue = DispatchQueue(label: "soak.serial.\(index)", qos: index % 8 == 0 ? .utility : .unspecified)
        last = Array(repeating: -1, count: producers)
    }

    /// Runs on the queue: the producer's items must come in submission order.
    func check(producer: Int, sequence: Int, _ ledger: SoakLedger) {
        if sequence <= last[producer] { ledger.orderViolations.wrappingAdd(1, ordering: .relaxed) }
        last[producer] = sequence
    }
}

/// A concurrent queue whose items check that no item runs beside a barrier.
final class SoakConcurrentQueue: @unchecked Sendable {
    let queue: DispatchQueue
    private let inside = Atomic<Int>(0)
    private let barrier = Atomic<Bool>(false)

    init(index: Int) {
        queue = DispatchQueue(label: "soak.concurrent.\(index)", attributes: .concurrent)
    }

    func plain(_ ledger: SoakLedger) {
        inside.wrappingAdd(1, ordering: .sequentiallyConsistent)
        if barrier.load(ordering: .sequentiallyConsistent) { ledger.barrierViolations.wrappingAdd(1, ordering: .relaxed) }
        inside.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }

    func barrierItem(_ ledger: SoakLedger) {
        barrier.store(true, ordering: .sequentiallyConsistent)
        if inside.load(ordering: .sequentiallyConsistent) != 0 {
            ledger.barrierViolations.wrappingAdd(1, ordering: .relaxed)
        }
        barrier.store(false, ordering: .sequentiallyConsistent)
    }
}

/// xorshift64*: a deterministic choice per producer, so a failing run can be replayed.
struct SoakRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next(_ bound: Int) -> Int {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return Int((state &* 0x2545_F491_4F6C_DD1D) >> 33) % bound
    }
}

enum SoakWorkload {
    static let qosChoices: [DispatchQoS] = [.background, .utility, .default, .userInitiated, .userInteractive,
                                            .unspecified]

    /// Submits items `range` as producer `producer`; returns once all are submitted
    /// (they may still be running).
    static func produce(_ producer: Int, range: Range<Int>, serial: [SoakSerialQueue],
                        concurrent: [SoakConcurrentQueue], ledger: SoakLedger, seed: UInt64) {
        var random = SoakRandom(seed: seed &+ UInt64(producer))
        var sequence = 0
        let group = DispatchGroup()
        for id in range {
            let qos = qosChoices[random.next(qosChoices.count)]
            let roll = random.next(100)
            switch roll {
            case 0..<45:
                let target = serial[random.next(serial.count)]
                sequence += 1
                let mine = sequence
                target.queue.async(qos: qos) {
                    target.check(producer: producer, sequence: mine, ledger)
                    ledger.markRan(id)
                }
            case 45..<55:
                let target = serial[random.next(serial.count)]
                sequence += 1
                let mine = sequence
                target.queue.async(group: group, qos: qos) {
                    target.check(producer: producer, sequence: mine, ledger)
                    ledger.markRan(id)
                }
            case 55..<70:
                let target = concurrent[random.next(concurrent.count)]
                if random.next(10) == 0 {
                    target.queue.async(group: group, qos: qos, flags: .barrier) {
                        target.barrierItem(ledger)
                        ledger.markRan(id)
                    }
                } else {
                    target.queue.async(qos: qos) {
                        target.plain(ledger)
                        ledger.markRan(id)
                    }
                }
            case 70..<82:
                DispatchQueue.global(qos: qos.qosClass).async { ledger.markRan(id) }
            case 82..<92:
                let item = DispatchWorkItem(qos: qos) { ledger.markRan(id) }
                let onto = random.next(2) == 0 ? serial[random.next(serial.count)].queue
                    : concurrent[random.next(concurrent.count)].queue
                if random.next(4) == 0 {
                    ledger.markCancelled(id)
                    item.notify(queue: .global()) { ledger.notifications.wrappingAdd(1, ordering: .relaxed) }
                    onto.async(execute: item)
                    item.cancel()
                } else {
                    onto.async(group: group, execute: item)
                }
            case 92..<97:
                let target = serial[random.next(serial.count)]
                target.queue.asyncAfter(deadline: .now() + .microseconds(random.next(2000)), qos: qos) {
                    ledger.markRan(id)
                }
            default:
                let target = serial[random.next(serial.count)]
                sequence += 1
                let mine = sequence
                target.queue.sync {
                    target.check(producer: producer, sequence: mine, ledger)
                    ledger.markRan(id)
                }
            }
            if id % 4096 == 0 {
                group.notify(queue: .global(qos: .utility)) {}
            }
        }
        group.wait()
    }
}
