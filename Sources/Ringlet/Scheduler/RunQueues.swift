/// The root run queues: one FIFO per run-queue index (QoS class × relative priority)
/// and a 128-bit occupancy bitmap, so "the most urgent node this band may take" is
/// two count-leading-zeros instructions. Not synchronised: the scheduler lock
/// protects it.
struct RunQueues {
    private let fifos: UnsafeMutablePointer<NodeFIFO>
    private var low: UInt64 = 0   // indices 0..<64
    private var high: UInt64 = 0  // indices 64..<128
    private(set) var count = 0

    init() {
        fifos = .allocate(capacity: RunQueueIndex.count)
        fifos.initialize(repeating: NodeFIFO(), count: RunQueueIndex.count)
    }

    func deallocate() {
        fifos.deinitialize(count: RunQueueIndex.count)
        fifos.deallocate()
    }

    mutating func append(_ node: WorkNodeRef, at index: Int) {
        fifos[index].append(node)
        if index < 64 { low |= 1 << UInt64(index) } else { high |= 1 << UInt64(index - 64) }
        count += 1
    }

    /// The highest occupied index, or -1.
    var highestIndex: Int {
        if high != 0 { return 127 - high.leadingZeroBitCount }
        if low != 0 { return 63 - low.leadingZeroBitCount }
        return -1
    }

    /// The highest occupied index inside `range`, or nil.
    func highestIndex(in range: ClosedRange<Int>) -> Int? {
        let upper = range.upperBound
        // Mask off bits above `upper`.
        if upper >= 64 {
            let shift = UInt64(127 - upper)
            let masked = (high << shift) >> shift
            if masked != 0 {
                let index = 127 - masked.leadingZeroBitCount
                return index >= range.lowerBound ? index : nil
            }
        }
        let lowUpper = min(upper, 63)
        let shift = UInt64(63 - lowUpper)
        let masked = (low << shift) >> shift
        if masked != 0 {
            let index = 63 - masked.leadingZeroBitCount
            return index >= range.lowerBound ? index : nil
        }
        return nil
    }

    mutating func removeFirst(at index: Int) -> WorkNodeRef? {
        guard let node = fifos[index].removeFirst() else { return nil }
        if fifos[index].isEmpty {
            if index < 64 { low &= ~(1 << UInt64(index)) } else { high &= ~(1 << UInt64(index - 64)) }
        }
        count -= 1
        return node
    }

    /// Pending nodes at `index`.
    func count(at index: Int) -> Int { fifos[index].count }

    /// Pending nodes of the QoS class with ordinal `ordinal` (`RunQueueIndex.classOrdinal`).
    func count(ofClass ordinal: Int) -> Int {
        var total = 0
        for index in ordinal * RunQueueIndex.perClass..<(ordinal + 1) * RunQueueIndex.perClass {
            total += fifos[index].count
        }
        return total
    }

    /// Calls `body` with every pending node, most urgent first (for reports).
    func forEach(_ body: (WorkNodeRef) -> Void) {
        var index = RunQueueIndex.last
        while index >= 0 {
            var node = fifos[index].head
            while let current = node {
                body(current)
                node = current.pointee.next
            }
            index -= 1
        }
    }
}
