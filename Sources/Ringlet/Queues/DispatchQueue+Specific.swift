/// A key for queue-specific values (`setSpecific`/`getSpecific`). Compared by
/// identity: each key object is a distinct slot.
public final class DispatchSpecificKey<T> {
    public init() {}
}

// @unchecked Sendable: a key has no state: it is compared by identity.
extension DispatchSpecificKey: @unchecked Sendable where T: Sendable {}

/// Holds a specific value in a queue's table; the key's type fixes `T`. Made and
/// read in the caller (the generic entry points are emitted there), so that
/// Ringlet's Embedded object holds no unspecialized trap for them.
@usableFromInline
final class _SpecificBox<T> {
    @usableFromInline let value: T
    @inlinable init(_ value: T) { self.value = value }
}

extension DispatchQueue {
    /// Stores `value` under `key` on this queue; nil removes it. Cost: a short
    /// linear search under the queue's lock (queues hold few keys).
    @_alwaysEmitIntoClient
    public func setSpecific<T>(key: DispatchSpecificKey<T>, value: T?) {
        _setSpecific(key: key, box: value.map { _SpecificBox($0) })
    }

    /// The value stored under `key` on this queue itself (not its targets), as
    /// `dispatch_queue_get_specific` does.
    @_alwaysEmitIntoClient
    public func getSpecific<T>(key: DispatchSpecificKey<T>) -> T? {
        // The key's type parameter fixed the box's type when it was stored.
        _specific(key: key).map { unsafeDowncast($0, to: _SpecificBox<T>.self).value }
    }

    /// The value for `key` on the queue the caller runs on, else on the nearest
    /// queue up its target hierarchy; nil outside any queue.
    @_alwaysEmitIntoClient
    public static func getSpecific<T>(key: DispatchSpecificKey<T>) -> T? {
        _currentSpecific(key: key).map { unsafeDowncast($0, to: _SpecificBox<T>.self).value }
    }

    @usableFromInline
    func _setSpecific(key: AnyObject, box: AnyObject?) {
        lock.lock()
        defer { lock.unlock() }
        let index = specifics.firstIndex { $0.key === key }
        guard let box else {
            if let index { specifics.remove(at: index) }
            return
        }
        let entry = (key: key, value: box)
        if let index { specifics[index] = entry } else { specifics.append(entry) }
    }

    /// The box stored under `key` on this queue itself.
    @usableFromInline
    func _specific(key: AnyObject) -> AnyObject? {
        lock.lock()
        defer { lock.unlock() }
        return specifics.first(where: { $0.key === key })?.value
    }

    /// The box for `key` on the caller's queue or the nearest up its targets.
    @usableFromInline
    static func _currentSpecific(key: AnyObject) -> AnyObject? {
        var queue = ThreadContext.current.currentQueue
        if queue == nil, ThreadContext.current.isMainThread { queue = DispatchQueue.main }
        while let current = queue {
            if let box = current._specific(key: key) { return box }
            queue = current.currentTarget
        }
        return nil
    }
}
