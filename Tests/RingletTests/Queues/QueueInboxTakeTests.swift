// A draining take moves at most `DispatchQueue.drainTakeLimit` nodes from a queue's
// inbox (Queues/QueueInbox.swift, `takeAll(upTo:)`): the rest stay there in order,
// pushes go on behind them, and the chain a take returns ends where it says.

import Testing
@testable import Ringlet

@Suite struct QueueInboxTakeTests {
    /// `count` block nodes of their own (not the pool's), numbered by `ticket`.
    static func nodes(_ count: Int) -> UnsafeMutablePointer<WorkNode> {
        let nodes = UnsafeMutablePointer<WorkNode>.allocate(capacity: count)
        for index in 0..<count {
            (nodes + index).initialize(to: WorkNode(next: nil, kind: .block, isBarrier: false,
                                                    priority: QoSPriority(.default), ticket: UInt32(index)))
        }
        return nodes
    }

    /// The tickets along a chain from `first`, which must end (nil `next`) at `last`.
    static func tickets(from first: WorkNodeRef, to last: WorkNodeRef) -> [Int] {
        var tickets: [Int] = []
        var cursor: WorkNodeRef? = first
        while let node = cursor {
            tickets.append(Int(node.pointee.ticket))
            if node.pointee.next == nil { #expect(node == last, "the chain ends before its last node") }
            cursor = node.pointee.next
        }
        return tickets
    }

    @Test func aBoundedTakeLeavesTheRestInOrderForTheNext() {
        let nodes = Self.nodes(700)
        defer { nodes.deinitialize(count: 700); nodes.deallocate() }
        let inbox = QueueInbox()
        for index in 0..<600 { _ = inbox.push(nodes + index) }
        var seen: [Int] = []
        guard let first = inbox.takeAll(upTo: 256, { seen.append(Int($0.pointee.ticket)) }) else {
            Issue.record("the first take found nothing")
            return
        }
        #expect(first.count == 256)
        #expect(Self.tickets(from: first.first, to: first.last) == Array(0..<256))
        let leftSome = !inbox.isEmpty
        #expect(leftSome, "the 344 nodes past the limit are gone from the inbox")
        // Pushes after a bounded take join behind what it left.
        for index in 600..<700 {
            if case .mustTake = inbox.push(nodes + index) { Issue.record("push \(index) found the inbox empty") }
        }
        let second = inbox.takeAll(upTo: 256) { seen.append(Int($0.pointee.ticket)) }
        #expect(second?.count == 256)
        if let second { #expect(Self.tickets(from: second.first, to: second.last) == Array(256..<512)) }
        let rest = inbox.takeAll { seen.append(Int($0.pointee.ticket)) }
        #expect(rest?.count == 188)
        if let rest { #expect(Self.tickets(from: rest.first, to: rest.last) == Array(512..<700)) }
        #expect(seen == Array(0..<700), "a take showed nodes out of order or twice")
        let emptied = inbox.isEmpty
        #expect(emptied)
        let after = inbox.takeAll { _ in Issue.record("a node after the inbox emptied") }
        #expect(after == nil)
        // Empty again: the next push is a chain's first.
        if case .joined = inbox.push(nodes) { Issue.record("a push into the emptied inbox joined a chain") }
    }

    /// A serial queue whose drainer is held while thousands of items pile up in the
    /// inbox runs each once, in order, taking them a bounded chunk at a time.
    @Test func aBacklogPastTheLimitRunsInOrder() {
        let queue = DispatchQueue(label: "test.inbox.backlog")
        let order = Recorder<Int>()
        let held = Gate()
        let started = Gate()
        queue.async { started.open(); held.pass() }
        #expect(started.pass())
        let count = 5 * DispatchQueue.drainTakeLimit + 17
        for index in 0..<count { queue.async { order.append(index) } }
        held.open()
        queue.sync {}
        #expect(order.values == Array(0..<count))
    }
}
