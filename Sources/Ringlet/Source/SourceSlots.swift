/// The manager's table of sources with a kernel side (polls), by slot: the only owner
/// of the slots and their generations, so a poll's completion names its source by slot
/// and generation and one for a source cancelled meanwhile, or whose slot another source
/// took, finds nothing. Manager thread only (`ManagerThread.sourceSlots`).
///
///   free --(1) claim--> taken --(2) release--> free (the generation moves on at the next claim)
struct SourceSlots {
    private var slots: [DispatchSource?] = []
    private var free: [Int] = []
    private var generation: UInt32 = 0

    /// Gives `source` a slot and a new generation (recorded in its registration).
    mutating func claim(_ source: DispatchSource) {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
        } else {
            slot = slots.count
            slots.append(nil)
        }
        slots[slot] = source
        generation &+= 1
        source.registration.slot = slot
        source.registration.generation = generation
    }

    /// Frees the slot `source` holds, if any.
    mutating func release(_ source: DispatchSource) {
        let slot = source.registration.slot
        guard slot >= 0 else { return }
        slots[slot] = nil
        free.append(slot)
        source.registration.slot = -1
    }

    /// The source in `slot` if it still has the generation's low 24 bits (a poll's user
    /// data carries no more); nil when the slot is free or another source took it.
    func source(slot: Int, generation: UInt32) -> DispatchSource? {
        guard slot < slots.count, let source = slots[slot],
              source.registration.generation & 0xFF_FFFF == generation else { return nil }
        return source
    }

    /// No source holds a slot.
    var isEmpty: Bool { slots.count == free.count }

    /// The sources holding a slot.
    var sources: [DispatchSource] {
        var taken: [DispatchSource] = []
        for case let source? in slots { taken.append(source) }
        return taken
    }
}
