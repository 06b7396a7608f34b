import Synchronization

/// The manager's inbox: a lock-free multi-producer stack that the manager empties
/// all at once (Architecture, "One manager thread"). Any thread pushes with one compare-and-swap;
/// the manager takes the whole chain with one exchange and reverses it, so requests
/// come out in the order they were pushed. With push-one/take-all there is no ABA.
///
/// Cost: one small allocation per request (the box), one CAS to push.
struct RequestStack<Element>: ~Copyable {
    private final class Box {
        let element: Element
        var next: UInt = 0
        init(_ element: Element) { self.element = element }
    }

    /// The newest box's address (an `Unmanaged` retained pointer), 0 when empty.
    private let head = Atomic<UInt>(0)

    init() {}

    deinit { _ = takeAll() }

    /// Any thread.
    func push(_ element: Element) {
        let box = Box(element)
        let address = UInt(bitPattern: Unmanaged.passRetained(box).toOpaque())
        var current = head.load(ordering: .relaxed)
        while true {
            box.next = current
            let (exchanged, seen) = head.weakCompareExchange(expected: current, desired: address,
                                                             successOrdering: .sequentiallyConsistent,
                                                             failureOrdering: .relaxed)
            if exchanged { return }
            current = seen
        }
    }

    /// Sequentially consistent, as is `push`: the manager's "store asleep, then check
    /// the inbox" and a producer's "push, then check asleep" must not both miss.
    var isEmpty: Bool { head.load(ordering: .sequentiallyConsistent) == 0 }

    /// The consumer: every element pushed so far, oldest first.
    func takeAll() -> [Element] {
        var address = head.exchange(0, ordering: .acquiring)
        var taken: [Element] = []
        while let pointer = UnsafeRawPointer(bitPattern: address) {
            let box = Unmanaged<Box>.fromOpaque(pointer).takeRetainedValue()
            taken.append(box.element)
            address = box.next
        }
        taken.reverse()
        return taken
    }
}
