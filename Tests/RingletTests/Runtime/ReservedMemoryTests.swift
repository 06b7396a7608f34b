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
        let memory = try #require(Memory.reserve(bytes), "mmap refused \(bytes) bytes")
        defer { Memory.release(memory, bytes: bytes) }
        let flags = try #require(vmFlags(at: memory + Int(bytes / 2)), "no smaps entry for the reservation")
        #expect(flags.contains("nh"), "the reservation's VmFlags are \(flags.joined(separator: " ")), without nh")
    }

    @Test func aSmallReservationIsLeftAsTheCLibraryGaveIt() throws {
        let memory = try #require(Memory.reserve(64 << 10), "malloc refused 64 KiB")
        defer { Memory.release(memory, bytes: 64 << 10) }
        let flags = try #require(vmFlags(at: memory), "no smaps entry for the reservation")
        #expect(!flags.contains("nh"), "a 64 KiB reservation was marked: \(flags.joined(separator: " "))")
    }

    /// A large reservation given back leaves no mark behind: what malloc hands out next
    /// in its place (glibc may serve 8 MiB from a heap once its mmap threshold has grown)
    /// is not kept out of huge pages by Ringlet's mark.
    @Test func aLargeReservationGivenBackLeavesNoMark() throws {
        let bytes: UInt64 = 8 << 20
        // Frees of large mapped blocks raise glibc's threshold: the case that marked heaps.
        for _ in 0..<4 { free(malloc(Int(bytes))) }
        let memory = try #require(Memory.reserve(bytes))
        let start = UInt(bitPattern: memory)
        Memory.release(memory, bytes: bytes)
        var small: [UnsafeMutableRawPointer] = []
        defer { small.forEach { free($0) } }
        var marked = 0
        for _ in 0..<64 {
            let block = try #require(malloc(64 << 10))
            small.append(block)
            let address = UInt(bitPattern: block)
            guard address >= start && address < start + UInt(bytes) else { continue }
            if vmFlags(at: block)?.contains("nh") == true { marked += 1 }
        }
        #expect(marked == 0, "\(marked) of malloc's blocks in the old reservation's place are kept out of huge pages")
    }
}
