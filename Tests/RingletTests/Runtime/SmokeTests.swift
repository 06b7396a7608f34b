import Testing
@testable import Ringlet

@Suite struct SmokeTests {
    /// The node is the per-item memory cost (`workNodes` × stride): keep it at 48 bytes
    /// (40 for the work, 8 for its breadcrumb; a group shares a field, WorkNode.carrying).
    @Test func aWorkNodeIsFortyEightBytes() {
        #expect(MemoryLayout<WorkNode>.stride == 48)
        // The queue inbox links nodes through `next` at offset 0 (System/NodeLink.swift).
        #expect(MemoryLayout<WorkNode>.offset(of: \WorkNode.next) == 0)
    }

    @Test func asyncRunsAndGroupWaits() {
        let queue = DispatchQueue(label: "smoke")
        let group = DispatchGroup()
        let counter = Counter()
        for _ in 0..<1000 {
            queue.async(group: group) { counter.increment() }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(counter.value == 1000)
        let v = queue.sync { 42 }
        #expect(v == 42)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = FutexLock()
    private var count = 0
    deinit { lock.deallocate() }
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
