/// A binary min-heap of (key, slot, generation), the index behind `TimerQueue`.
struct MinHeap {
    struct Item {
        let key: UInt64
        let slot: Int
        let generation: UInt32
    }

    private var items: [Item] = []

    var top: Item? { items.first }
    var count: Int { items.count }

    mutating func push(key: UInt64, slot: Int, generation: UInt32) {
        items.append(Item(key: key, slot: slot, generation: generation))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if items[parent].key <= items[child].key { break }
            items.swapAt(parent, child)
            child = parent
        }
    }

    mutating func pop() -> Item? {
        guard !items.isEmpty else { return nil }
        let first = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < items.count && items[left].key < items[smallest].key { smallest = left }
                if right < items.count && items[right].key < items[smallest].key { smallest = right }
                if smallest == parent { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}
