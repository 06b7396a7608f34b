import Glibc
import Testing
@testable import Ringlet

/// DispatchData: regions without copies, slicing, copies out, deallocators.
struct DispatchDataTests {
    private func data(_ bytes: [UInt8]) -> DispatchData {
        bytes.withUnsafeBytes { DispatchData(bytes: $0) }
    }

    /// Three regions: 0..<3, 3..<7, 7..<10.
    private var threeRegions: DispatchData {
        var result = data([0, 1, 2])
        result.append(data([3, 4, 5, 6]))
        result.append(data([7, 8, 9]))
        return result
    }

    @Test func emptyHasNoBytes() {
        #expect(DispatchData.empty.count == 0)
        #expect(Array(DispatchData.empty) == [])
        var copy = DispatchData.empty
        copy.append(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(copy.count == 0)
    }

    @Test func initCopiesTheBytes() {
        var bytes: [UInt8] = [1, 2, 3]
        let made = data(bytes)
        bytes[0] = 9
        #expect(Array(made) == [1, 2, 3])
    }

    @Test func appendKeepsRegionsWithoutCopying() {
        let first = data([1, 2])
        var joined = first
        joined.append(data([3]))
        #expect(joined.regions.count == 2)
        #expect(joined.regions[0].storage === first.regions[0].storage)
        #expect(Array(joined) == [1, 2, 3])
        #expect(first.count == 2)  // a value: the original is unchanged
    }

    @Test func indexingAndIterationCrossRegions() {
        let d = threeRegions
        #expect(d.count == 10)
        #expect((0..<10).map { d[$0] } == Array(0...9))
        #expect(Array(d) == Array(0...9))
        #expect(Array(d[2..<8]) == [2, 3, 4, 5, 6, 7])
        #expect(d.reversed() == Array((0...9).reversed()))
    }

    @Test func subdataSharesStorageAcrossRegions() {
        let d = threeRegions
        let middle = d.subdata(in: 2..<8)
        #expect(Array(middle) == [2, 3, 4, 5, 6, 7])
        #expect(middle.regions.count == 3)
        #expect(middle.regions[1].storage === d.regions[1].storage)
        #expect(d.subdata(in: 4..<4).count == 0)
    }

    @Test func regionOfALocation() {
        let d = threeRegions
        let (region, offset) = d.region(location: 5)
        #expect(offset == 3)
        #expect(Array(region) == [3, 4, 5, 6])
        #expect(d.region(location: 0).offset == 0)
        #expect(d.region(location: 9).offset == 7)
    }

    @Test func enumerateBytesVisitsRegionsInOrderAndStops() {
        var seen: [(Int, [UInt8])] = []
        threeRegions.enumerateBytes { buffer, index, stop in
            seen.append((index, Array(buffer)))
            if index == 3 { stop = true }
        }
        #expect(seen.map(\.0) == [0, 3])
        #expect(seen.map(\.1) == [[0, 1, 2], [3, 4, 5, 6]])
    }

    @Test func withUnsafeBytesGivesContiguousBytes() {
        let sum = threeRegions.withUnsafeBytes { (pointer: UnsafePointer<UInt8>) in
            (0..<10).reduce(0) { $0 + Int(pointer[$1]) }
        }
        #expect(sum == 45)
        let single = data([5, 6])
        let first = single.withUnsafeBytes { (pointer: UnsafePointer<UInt8>) in pointer.pointee }
        #expect(first == 5)
    }

    @Test func copyBytesVariants() {
        let d = threeRegions
        var out = [UInt8](repeating: 0, count: 10)
        out.withUnsafeMutableBytes { d.copyBytes(to: $0, count: 10) }
        #expect(out == Array(0...9))
        var part = [UInt8](repeating: 0, count: 4)
        part.withUnsafeMutableBytes { d.copyBytes(to: $0, from: 2..<6) }
        #expect(part == [2, 3, 4, 5])
        var small = [UInt8](repeating: 0, count: 3)
        let copied = small.withUnsafeMutableBufferPointer { d.copyBytes(to: $0, from: 5..<10) }
        #expect(copied == 3)
        #expect(small == [5, 6, 7])
        var words = [UInt16](repeating: 0, count: 2)
        let wordBytes = words.withUnsafeMutableBufferPointer { d.copyBytes(to: $0) }
        #expect(wordBytes == 4)
    }

    @Test func customDeallocatorRunsOnceAfterTheLastReference() {
        let released = DispatchSemaphore(value: 0)
        let count = AtomicCounter()
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        buffer.initializeMemory(as: UInt8.self, repeating: 4, count: 8)
        do {
            let owned = DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: buffer, count: 8),
                                     deallocator: .custom(nil, {
                                         _ = count.increment()
                                         buffer.deallocate()
                                         released.signal()
                                     }))
            var longer = owned
            longer.append(data([1]))
            let slice = longer.subdata(in: 2..<4)
            #expect(Array(slice) == [4, 4])
            #expect(count.value == 0)
        }
        #expect(waited(released))
        #expect(count.value == 1)  // the storage is gone: nothing can release it again
    }

    @Test func freeDeallocatorTakesMallocMemory() {
        let buffer = malloc(16)!
        memset(buffer, 3, 16)
        let d = DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: buffer, count: 16), deallocator: .free)
        #expect(Array(d) == [UInt8](repeating: 3, count: 16))
    }
}
