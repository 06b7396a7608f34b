/// Bytes made of regions, as GCD's `DispatchData`: appending, slicing and handing
/// data through a channel never copy bytes; only `init(bytes:)`, `append` of a raw
/// buffer, and `withUnsafeBytes` on data of several regions do.
///
/// A value type over immutable, reference-counted storage, so it may be passed
/// between threads freely.
// @unchecked Sendable: regions over immutable, reference-counted storage.
public struct DispatchData: RandomAccessCollection, @unchecked Sendable {
    public typealias Index = Int
    public typealias Indices = Range<Int>
    public typealias Iterator = DispatchDataIterator

    /// How the bytes given to `init(bytesNoCopy:deallocator:)` are released when no
    /// data refers to them any more.
    public enum Deallocator {
        /// free(3).
        case free
        /// munmap(2) of the buffer's length.
        case unmap
        /// Runs the closure, asynchronously, on the queue (nil: the default global queue).
        case custom(DispatchQueue?, () -> Void)
    }

    /// The regions, in order.
    var regions: [DataRegion]
    /// Where each region starts in the data (same indices as `regions`).
    private var starts: [Int]
    public private(set) var count: Int

    /// Data with no bytes.
    public static let empty = DispatchData(regions: [])

    init(regions: [DataRegion]) {
        self.regions = []
        starts = []
        count = 0
        regions.forEach { appendRegion($0) }
    }

    /// Data holding a copy of `bytes`.
    public init(bytes buffer: UnsafeRawBufferPointer) {
        self.init(regions: [])
        append(buffer)
    }

    /// Data holding a copy of `buffer` (the Swift 3 spelling, kept for source compatibility).
    @available(swift, deprecated: 4, message: "Use init(bytes: UnsafeRawBufferPointer) instead")
    public init(bytes buffer: UnsafeBufferPointer<UInt8>) {
        self.init(bytes: UnsafeRawBufferPointer(buffer))
    }

    /// Data over `bytes` without copying them; `deallocator` releases them when the
    /// last data referring to them is gone.
    public init(bytesNoCopy bytes: UnsafeRawBufferPointer, deallocator: Deallocator = .free) {
        self.init(regions: [])
        guard let base = bytes.baseAddress else { return }
        let release: DataStorage.Release
        switch deallocator {
        case .free: release = .free
        case .unmap: release = .unmap(length: bytes.count)
        case .custom(let queue, let body): release = .custom(queue, body)
        }
        if UInt(bitPattern: Int(bitPattern: base)).addingReportingOverflow(UInt(bytes.count)).overflow {
            ringletMisuse("DispatchData(bytesNoCopy:) of \(bytes.count) bytes at 0x\(String(UInt(bitPattern: base), radix: 16)) runs past the end of "
                + "the address space; pass the buffer's real count")
        }
        let storage = DataStorage(base: UnsafeMutableRawPointer(mutating: base), capacity: bytes.count,
                                  release: release)
        appendRegion(DataRegion(storage: storage, start: 0, count: bytes.count))
    }

    @available(swift, deprecated: 4, message: "Use init(bytesNoCopy: UnsafeRawBufferPointer, deallocater: Deallocator) instead")
    public init(bytesNoCopy bytes: UnsafeBufferPointer<UInt8>, deallocator: Deallocator = .free) {
        self.init(bytesNoCopy: UnsafeRawBufferPointer(bytes), deallocator: deallocator)
    }

    // MARK: Appending

    /// Appends `other`'s regions (no bytes are copied).
    public mutating func append(_ other: DispatchData) {
        other.regions.forEach { appendRegion($0) }
    }

    /// Appends a copy of `bytes`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.baseAddress != nil, bytes.count > 0 else { return }
        _ = countAfterAppending(bytes.count)  // before copying: a count past Int.max traps with both counts
        let storage = DataStorage(copying: bytes)
        appendRegion(DataRegion(storage: storage, start: 0, count: bytes.count))
    }

    /// Appends a copy of `count` bytes at `bytes` (the Swift 3 spelling).
    @available(swift, deprecated: 4, message: "Use append(_: UnsafeRawBufferPointer) instead")
    public mutating func append(_ bytes: UnsafePointer<UInt8>, count: Int) {
        append(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Appends a copy of `buffer`'s bytes.
    @_alwaysEmitIntoClient
    public mutating func append<SourceType>(_ buffer: UnsafeBufferPointer<SourceType>) {
        append(UnsafeRawBufferPointer(buffer))
    }

    mutating func appendRegion(_ region: DataRegion) {
        if region.count == 0 { return }
        let total = countAfterAppending(region.count)
        starts.append(count)
        regions.append(region)
        count = total
    }

    /// `count + more`; traps with both counts when that passes Int.max.
    private func countAfterAppending(_ more: Int) -> Int {
        let (total, overflow) = count.addingReportingOverflow(more)
        if overflow {
            ringletMisuse("DispatchData.append: the data's \(count) bytes and \(more) more exceed Int.max bytes; "
                + "a buffer's count is wrong (bytesNoCopy of a made-up size?)")
        }
        return total
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public var indices: Range<Int> { 0..<count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    /// The byte at `index` (a binary search over the regions).
    public subscript(index: Int) -> UInt8 {
        if index < 0 || index >= count {
            ringletMisuse("DispatchData[\(index)] is outside the data's \(count) bytes (valid indices: 0..<\(count))")
        }
        let r = regionIndex(containing: index)
        return regions[r].bytes[index - starts[r]]
    }

    public subscript(bounds: Range<Int>) -> Slice<DispatchData> {
        Slice(base: self, bounds: bounds)
    }

    public func makeIterator() -> DispatchDataIterator { DispatchDataIterator(self) }

    /// The index in `regions` of the region holding byte `location`.
    func regionIndex(containing location: Int) -> Int {
        var low = 0, high = regions.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= location { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Where region `index` starts in the data.
    func start(ofRegion index: Int) -> Int { starts[index] }
}

/// Iterates a `DispatchData` byte by byte, region by region.
public struct DispatchDataIterator: IteratorProtocol, Sequence {
    private let data: DispatchData
    private var region = 0
    private var offset = 0

    public init(_data: DispatchData) { self.init(_data) }

    init(_ data: DispatchData) { self.data = data }

    public mutating func next() -> UInt8? {
        while region < data.regions.count {
            let bytes = data.regions[region].bytes
            if offset < bytes.count {
                defer { offset += 1 }
                return bytes[offset]
            }
            region += 1
            offset = 0
        }
        return nil
    }
}
