// The manager's table of sources with a kernel side: a poll's completion names its
// source by slot and generation, so one for a source whose slot another source took
// finds nothing (the table alone, no runtime thread involved).

import Testing
@testable import Ringlet

@Suite struct SourceSlotsTests {
    private func source(_ label: String) -> DispatchSource {
        DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: label)) as! DispatchSource
    }

    @Test func aReusedSlotAnswersOnlyToItsNewGeneration() {
        var table = SourceSlots()
        let first = source("test.slots.first"), second = source("test.slots.second")
        #expect(table.isEmpty)
        table.claim(first)
        let (slot, old) = (first.registration.slot, first.registration.generation)
        #expect(table.source(slot: slot, generation: old & 0xFF_FFFF) === first && !table.isEmpty)
        table.release(first)
        #expect(first.registration.slot == -1 && table.isEmpty)
        #expect(table.source(slot: slot, generation: old & 0xFF_FFFF) == nil)
        table.claim(second)
        #expect(second.registration.slot == slot && second.registration.generation != old)
        #expect(table.source(slot: slot, generation: old & 0xFF_FFFF) == nil)
        #expect(table.source(slot: slot, generation: second.registration.generation & 0xFF_FFFF) === second)
        #expect(table.sources.count == 1)
        table.release(second)
        table.release(second)  // a second release of a freed slot changes nothing
        #expect(table.isEmpty && table.sources.isEmpty)
        first.cancel()
        second.cancel()
    }
}
