/// Every live queue, so that reports (the stall report, the live dump) can name the
/// queue another thread is running without holding a reference to it.
///
/// A queue enters the registry in its initialiser and leaves it first thing in its
/// `deinit`, under the registry's lock; so while a reader holds the lock, every
/// registered queue is intact (its stored properties outlive the deinit body). The
/// queues are linked intrusively (two words per queue); registering costs one lock.
// @unchecked Sendable: the list is read and written under `lock` only.
final class QueueRegistry: @unchecked Sendable {
    static let shared = QueueRegistry()
    private let lock = FutexLock()
    private var head: Unmanaged<DispatchQueue>?
    /// The next queue number (`DispatchQueue.number`); 31 bits, then it wraps.
    private var nextNumber: UInt32 = 1
    /// The labels of the last queues released, by number, so a breadcrumb naming a
    /// queue gone since still reads well. A ring of `releasedCapacity`.
    private var released: [(number: UInt32, label: String)] = []
    private var releasedNext = 0
    static let releasedCapacity = 64

    func insert(_ queue: DispatchQueue) {
        let entry = Unmanaged.passUnretained(queue)
        lock.withLock {
            queue.number = nextNumber
            nextNumber = nextNumber == 0x7FFF_FFFF ? 1 : nextNumber + 1
            queue.registryNext = head
            queue.registryPrevious = nil
            head?._withUnsafeGuaranteedRef { $0.registryPrevious = entry }
            head = entry
        }
    }

    func remove(_ queue: DispatchQueue) {
        lock.withLock {
            let next = queue.registryNext, previous = queue.registryPrevious
            if let previous {
                previous._withUnsafeGuaranteedRef { $0.registryNext = next }
            } else {
                head = next
            }
            next?._withUnsafeGuaranteedRef { $0.registryPrevious = previous }
            if released.count < Self.releasedCapacity {
                released.append((queue.number, queue.label))
            } else {
                released[releasedNext] = (queue.number, queue.label)
            }
            releasedNext = (releasedNext + 1) % Self.releasedCapacity
        }
    }

    /// The label of queue number `number` and whether it is live (else it is among
    /// the last released). With `tryOnly`, nil when the lock is held (a trap message
    /// may be written by a thread that holds it).
    func label(ofQueueNumbered number: UInt32, tryOnly: Bool = false) -> (label: String, live: Bool)? {
        if tryOnly {
            if !lock.tryLock() { return nil }
        } else {
            lock.lock()
        }
        defer { lock.unlock() }
        var cursor = head
        while let entry = cursor {
            let found = entry._withUnsafeGuaranteedRef { $0.number == number ? $0.label : nil }
            if let found { return (found, true) }
            cursor = entry._withUnsafeGuaranteedRef { $0.registryNext }
        }
        for entry in released where entry.number == number { return (entry.label, false) }
        return nil
    }

    /// Calls `body` with each live queue under the lock. `body` reads the queue and
    /// must not keep a reference to it (it may be in its deinit, waiting for the lock).
    func forEach(_ body: (DispatchQueue) -> Void) {
        lock.withLock {
            var cursor = head
            while let entry = cursor {
                entry._withUnsafeGuaranteedRef(body)
                cursor = entry._withUnsafeGuaranteedRef { $0.registryNext }
            }
        }
    }

    /// The label of the live queue at `address` (a `ThreadContext.currentQueueAddress`
    /// read from another thread), or nil when no live queue is there.
    func label(ofQueueAt address: UInt) -> String? {
        if address == 0 { return nil }
        var found: String?
        forEach { queue in
            if UInt(bitPattern: Unmanaged.passUnretained(queue).toOpaque()) == address { found = queue.label }
        }
        return found
    }
}
