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

    func insert(_ queue: DispatchQueue) {
        let entry = Unmanaged.passUnretained(queue)
        lock.withLock {
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
        }
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
