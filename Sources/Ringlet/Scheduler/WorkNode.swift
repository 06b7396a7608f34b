/// One unit of pending work in a queue's FIFO or in a root run queue. Nodes come
/// from the fixed `WorkNodePool`; queues link them intrusively through `next`.
///
/// Layout: the small fields come first so they share the 8 bytes after `next`;
/// a node is 48 bytes (checked by a test), 8 of them the breadcrumb. A group has no
/// field of its own: a `.block` node keeps its address in `object`, which blocks leave
/// free, and a `.workItem` node a closure that leaves it in `block`, which work items
/// leave free (see `carrying` and `setBlockGroup`).
struct WorkNode {
    /// What the node carries; decides how a drainer runs it.
    enum Kind: UInt8 {
        /// A closure submitted with `async`; `block` holds it, `object` the address
        /// of the group it leaves once it has run (`async(group:)`), if any, without a
        /// reference (`setBlockGroup`).
        case block
        /// A `DispatchWorkItem` submitted with `async(execute:)`; `object` holds it,
        /// `block` the group's leave when it was submitted with `async(group:execute:)`.
        case workItem
        /// A wake-up token of a child queue (`object`) in its target's FIFO:
        /// running it drains a batch of the child.
        case queueToken
        /// A contended `sync`: `block` runs the caller's closure, then `object` (a
        /// `SyncWaiter`) is signalled.
        case syncWaiter
        /// One of a dispatch source's own nodes (not from the pool; `object` is the
        /// source, `ticket` the node's `DispatchSource.NodeRole`): running it runs the
        /// source's delivery, cancel or registration step, and the node stays the
        /// source's, to be pushed again.
        case sourceNode
        /// A Swift concurrency job (a task's next slice, an actor's turn): the job's
        /// address is kept in `object`'s word without a reference (Concurrency/JobNode.swift),
        /// `ticket` says which executor runs it (`JobNode.Executor`).
        case job
    }

    var next: UnsafeMutablePointer<WorkNode>?
    var kind: Kind
    /// Run as a barrier on a concurrent queue.
    var isBarrier: Bool
    /// The QoS the node runs at (for tokens: the level they were pushed at).
    var priority: QoSPriority
    /// For a node pushed straight to a global queue: that queue's `QoSLevel` raw value
    /// + 1 (0: none), so the item runs "on" the queue it was sent to even when its
    /// priority put it in another run queue (the default global queue's rule).
    var submittedRoot: UInt8 = 0
    /// For `.workItem` nodes: which submission of the item this is, so a copy pushed
    /// to raise it (see `DispatchWorkItem.wait`) and the original run it only once.
    /// For `.sourceNode` nodes: the node's role. For `.job` nodes: the executor.
    var ticket: UInt32 = 0
    var block: (() -> Void)?
    var object: AnyObject?
    /// Where the item came from (`Breadcrumb`): copied from the submitting thread's
    /// `ThreadContext.submitCrumb`; the runner hands it on to what the item submits.
    var crumb: UInt64 = 0
}

extension WorkNode {
    /// Moves the closure out (the node keeps nil), without reference counting once
    /// optimised. Not `Optional.take()`: that generic path reabstracts the closure
    /// and allocates a thunk context per call.
    @inline(__always)
    mutating func takeBlock() -> (() -> Void)? {
        let taken = block
        block = nil
        return taken
    }

    @inline(__always)
    mutating func takeObject() -> AnyObject? {
        let taken = object
        object = nil
        return taken
    }

    /// The node's contents for a work item left by a group once it has run: 48 bytes
    /// instead of the 56 a field of its own would take, for every node. A closure's
    /// group goes in with `setBlockGroup` instead.
    static func carrying(kind: Kind, priority: QoSPriority, isBarrier: Bool, block: (() -> Void)?,
                         object: AnyObject?, group: DispatchGroup?, crumb: UInt64) -> WorkNode {
        guard let group else {
            return WorkNode(next: nil, kind: kind, isBarrier: isBarrier, priority: priority,
                            block: block, object: object, crumb: crumb)
        }
        guard kind == .workItem else { ringletBug("WorkNode.carrying: a \(kind) node cannot carry a group") }
        // A closure whose only capture is a class reference uses that reference as
        // its context: nothing is allocated.
        return WorkNode(next: nil, kind: kind, isBarrier: isBarrier, priority: priority,
                        block: { group.leave() }, object: object, crumb: crumb)
    }

    /// The word of `node`'s `object` field, for nodes that keep an address there without
    /// a reference: a `.block` node its group's (the group holds itself while its
    /// closures count, `DispatchGroup.enterForClosure`), a `.job` node its job's
    /// (Concurrency/JobNode.swift). Found through the field's address (the node is in
    /// the pool's memory, which never moves) rather than `MemoryLayout.offset(of:)`,
    /// whose key path Embedded Swift lacks.
    @inline(__always)
    static func objectWord(_ node: WorkNodeRef) -> UnsafeMutableRawPointer {
        withUnsafeMutablePointer(to: &node.pointee.object) { UnsafeMutableRawPointer($0) }
    }

    /// Gives the `.block` node `node` the group its closure leaves once it has run.
    @inline(__always)
    static func setBlockGroup(_ group: Unmanaged<DispatchGroup>, of node: WorkNodeRef) {
        objectWord(node).storeBytes(of: group.toOpaque(), as: UnsafeMutableRawPointer?.self)
    }

    /// The address of a `.block` node's group (nil: none), to compare without a reference.
    @inline(__always)
    static func blockGroupAddress(_ node: WorkNodeRef) -> UnsafeMutableRawPointer? {
        objectWord(node).load(as: UnsafeMutableRawPointer?.self)
    }

    /// Moves out the group of a `.block` node, which holds no reference to it: the
    /// caller leaves it with `DispatchGroup.leave(closures:of:)`.
    @inline(__always)
    static func takeBlockGroup(_ node: WorkNodeRef) -> Unmanaged<DispatchGroup>? {
        let word = objectWord(node)
        guard let bits = word.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        word.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        return Unmanaged<DispatchGroup>.fromOpaque(bits)
    }
}

typealias WorkNodeRef = UnsafeMutablePointer<WorkNode>

/// An intrusive FIFO of work nodes. Not synchronised: its owner's lock protects it.
struct NodeFIFO {
    private(set) var head: WorkNodeRef?
    private(set) var tail: WorkNodeRef?
    private(set) var count = 0

    var isEmpty: Bool { head == nil }

    mutating func append(_ node: WorkNodeRef) {
        node.pointee.next = nil
        if let tail { tail.pointee.next = node } else { head = node }
        tail = node
        count += 1
    }

    /// Appends a chain already linked through `next` from `first` to `last` (whose
    /// `next` is nil), in O(1): no node is written.
    mutating func append(chain first: WorkNodeRef, last: WorkNodeRef, count added: Int) {
        if let tail { tail.pointee.next = first } else { head = first }
        tail = last
        count += added
    }

    mutating func removeFirst() -> WorkNodeRef? {
        guard let node = head else { return nil }
        head = node.pointee.next
        if head == nil { tail = nil }
        node.pointee.next = nil
        count -= 1
        return node
    }

    /// Puts a detached chain back in front: `first`...`last`, `count` nodes.
    mutating func prepend(first: WorkNodeRef, last: WorkNodeRef, count added: Int) {
        last.pointee.next = head
        if head == nil { tail = last }
        head = first
        count += added
    }

    /// The nodes of a chain, for scans.
    static func nodes(startingAt first: WorkNodeRef?) -> UnfoldSequence<WorkNodeRef, WorkNodeRef?> {
        sequence(state: first) { cursor in
            guard let node = cursor else { return nil }
            cursor = node.pointee.next
            return node
        }
    }

    /// Removes every node in O(1); the caller walks the chain through `next`.
    mutating func removeAll() -> (first: WorkNodeRef?, last: WorkNodeRef?, count: Int) {
        let chain = (head, tail, count)
        head = nil
        tail = nil
        count = 0
        return chain
    }
}
