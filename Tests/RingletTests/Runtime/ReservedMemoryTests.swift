// The work-node pool's reservation (`Memory.reserve`) is kept out of transparent huge
// pages: the pool is touched a node at a time, so with THP "always" one touch past a
// 2 MiB boundary could make a whole huge page resident (2 MB of idle RSS on a board).
// smaps' VmFlags says "nh" for pages marked MADV_NOHUGEPAGE.

import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

/// The VmFlags of the mapping holding `address`, or nil when smaps cannot say.
private func vmFlags(at address: UnsafeRawPointer) -> [Substring]? {
    var text = [CChar](repeating: 0, count: 256)
    guard rl_test_vm_flags(address, &text, Int32(text.count)) == 0 else { return nil }
    return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.split(separator: " ")
}

private let kernelHasHugePages = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0

@Suite(.enabled(if: kernelHasHugePages, "this kernel has no transparent huge pages to keep out"))
struct ReservedMemoryTests {
    @Test func aLargeReservationIsKeptOutOfHugePages() throws {
        let bytes: UInt64 = 8 << 20
        let memory = try #require(Memory.reserve(bytes), "malloc refused \(bytes) bytes")
        defer { Memory.free(memory) }
        let flags = try #require(vmFlags(at: memory + Int(bytes / 2)), "no smaps entry for the reservation")
        #expect(flags.contains("nh"), "the reservation's VmFlags are \(flags.joined(separator: " ")), without nh")
    }

    @Test func aSmallReservationIsLeftAsTheCLibraryGaveIt() throws {
        let memory = try #require(Memory.reserve(64 << 10), "malloc refused 64 KiB")
        defer { Memory.free(memory) }
        let flags = try #require(vmFlags(at: memory), "no smaps entry for the reservation")
        #expect(!flags.contains("nh"), "a 64 KiB reservation was marked: \(flags.joined(separator: " "))")
    }
}
