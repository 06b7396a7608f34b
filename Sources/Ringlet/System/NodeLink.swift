import CRinglet

/// Atomic access to a work node's `next` link, for the queue inbox (Queues/QueueInbox.swift):
/// a producer links the previous tail to its node with a release store while a consumer
/// may be reading that link with an acquire load. Elsewhere `next` is a plain field,
/// owned by whoever holds the lock of the list the node is in.
enum NodeLink {
    /// Where `next` lives in a node: its first field, at offset 0 (checked by a test;
    /// Embedded Swift has no key paths to ask `MemoryLayout.offset(of:)` here).
    @inline(__always)
    private static func slot(_ node: WorkNodeRef) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(node)
    }

    /// `node.next`, read with acquire ordering: the linked node's fields are visible.
    @inline(__always)
    static func load(_ node: WorkNodeRef) -> WorkNodeRef? {
        rl_atomic_load_ptr(slot(node))?.assumingMemoryBound(to: WorkNode.self)
    }

    /// Sets `node.next` to `next` with release ordering.
    @inline(__always)
    static func store(_ node: WorkNodeRef, next: WorkNodeRef) {
        rl_atomic_store_ptr(slot(node), UnsafeMutableRawPointer(next))
    }
}
