/// A key for queue-specific values (`setSpecific`/`getSpecific`). Compared by
/// identity: each key object is a distinct slot.
public final class DispatchSpecificKey<T> {
    public init() {}
}

// @unchecked Sendable: a key has no state: it is compared by identity.
extension DispatchSpecificKey: @unchecked Sendable where T: Sendable {}

/// Holds a specific value in a queue's table; the key's type fixes `T`.
private final class SpecificBox<T> {
    let value: T
    init(_ value: T) { self.value = value }
}

extension DispatchQueue {
    /// Stores `value` under `key` on this queue; nil removes it. Cost: a short
    /// linear search under the queue's lock (queues hold few keys).
    public func setSpecific<T>(key: DispatchSpecificKey<T>, value: T?) {
        lock.lock()
        defer { lock.unlock() }
        let index = specifics.firstIndex { $0.key === key }
        guard let value else {
            if let index { specifics.remove(at: index) }
            return
        }
        let entry = (key: key as AnyObject, value: SpecificBox(value) as AnyObject)
        if let index { specifics[index] = entry } else { specifics.append(entry) }
    }

    /// The value stored under `key` on this queue itself (not its targets), as
    /// `dispatch_queue_get_specific` does.
    public func getSpecific<T>(key: DispatchSpecificKey<T>) -> T? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = specifics.first(where: { $0.key === key }) else { return nil }
        // The key's type parameter fixed the box's type when it was stored.
        return unsafeDowncast(entry.value, to: SpecificBox<T>.self).value
    }

    /// The value for `key` on the queue the caller runs on, else on the nearest
    /// queue up its target hierarchy; nil outside any queue.
    public static func getSpecific<T>(key: DispatchSpecificKey<T>) -> T? {
        var queue = ThreadContext.current.currentQueue
        if queue == nil, ThreadContext.current.isMainThread { queue = DispatchQueue.main }
        while let current = queue {
            if let value = current.getSpecific(key: key) { return value }
            queue = current.currentTarget
        }
        return nil
    }
}
