import Glibc
import Testing
@testable import Ringlet

/// DispatchData's misuse traps: each names the index or count and the data's count,
/// in release builds too (they are `ringletMisuse`, not `precondition`), and sizes
/// that overflow Int trap with a message instead of an arithmetic-overflow crash.
struct DispatchDataBoundsTests {
    /// Ten bytes in two regions.
    static var tenBytes: DispatchData {
        var data = [UInt8](0..<4).withUnsafeBytes { DispatchData(bytes: $0) }
        [UInt8](4..<10).withUnsafeBytes { data.append($0) }
        return data
    }

    /// Data that claims `count` bytes at a real address without touching them (16
    /// allocated bytes, freed with the data).
    static func huge(_ count: Int) -> DispatchData {
        let base = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        return DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: base, count: count), deallocator: .free)
    }

    @Test func anIndexOutsideTheDataTrapsWithIndexAndCount() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            _ = DispatchDataBoundsTests.tenBytes[10]
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("Ringlet: DispatchData[10]"), "\(text)")
        #expect(text.contains("10 bytes"), "\(text)")
    }

    @Test func aNegativeIndexTraps() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            _ = DispatchDataBoundsTests.tenBytes[-1]
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("DispatchData[-1]"), "\(text)")
    }

    @Test func copyingMoreThanTheBufferHoldsTraps() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            var out = [UInt8](repeating: 0, count: 4)
            out.withUnsafeMutableBytes { DispatchDataBoundsTests.tenBytes.copyBytes(to: $0, count: 8) }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("copyBytes(to:count: 8)"), "\(text)")
        #expect(text.contains("holds 4 bytes"), "\(text)")
    }

    @Test func copyingMoreThanTheDataHasTraps() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            var out = [UInt8](repeating: 0, count: 64)
            out.withUnsafeMutableBytes { DispatchDataBoundsTests.tenBytes.copyBytes(to: $0, count: 20) }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("copyBytes(to:count: 20)"), "\(text)")
        #expect(text.contains("data's 10 bytes"), "\(text)")
    }

    @Test func aNegativeCopyCountTraps() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            var out = [UInt8](repeating: 0, count: 4)
            out.withUnsafeMutableBytes { DispatchDataBoundsTests.tenBytes.copyBytes(to: $0, count: -1) }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("count: -1"), "\(text)")
    }

    @Test func appendingPastIntMaxTrapsWithBothCounts() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            var data = DispatchDataBoundsTests.huge(Int.max)
            data.append([UInt8](repeating: 7, count: 10).withUnsafeBytes { DispatchData(bytes: $0) })
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("\(Int.max) bytes"), "\(text)")
        #expect(text.contains("10 more"), "\(text)")
    }

    @Test func appendingABufferPastIntMaxTraps() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            var data = DispatchDataBoundsTests.tenBytes
            let base = UnsafeRawPointer(bitPattern: 0x1000)!
            data.append(UnsafeRawBufferPointer(start: base, count: Int.max))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("\(Int.max) more"), "\(text)")
    }

    @Test func bytesNoCopyPastTheAddressSpaceTraps() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            let base = UnsafeRawPointer(bitPattern: UInt(bitPattern: -4096))!
            _ = DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: base, count: 1 << 20),
                             deallocator: .custom(nil, {}))
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("DispatchData(bytesNoCopy:"), "\(text)")
    }

    /// Data whose regions add up to nearly Int.max still slices and copies correctly.
    @Test func hugeDataSlicesWithoutOverflow() {
        var data = Self.huge(Int.max - 20)
        data.append(Self.tenBytes)
        #expect(data.count == Int.max - 10)
        let tail = data.subdata(in: (Int.max - 20)..<(Int.max - 10))
        #expect(Array(tail) == Array(0..<10))
        #expect(data.region(location: Int.max - 11).offset == Int.max - 16)  // tenBytes: 4 + 6
        var out = [UInt8](repeating: 0, count: 4)
        let copied = out.withUnsafeMutableBufferPointer { data.copyBytes(to: $0, from: (Int.max - 14)..<(Int.max - 10)) }
        #expect(copied == 4 && out == [6, 7, 8, 9])
    }
}
