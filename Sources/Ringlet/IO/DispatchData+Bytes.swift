// Reading a DispatchData's bytes: slices, regions, copies and contiguous views.
extension DispatchData {
    /// The bytes in `range` as new data sharing this data's storage (no copy).
    /// Traps when `range` is outside `0..<count`.
    public func subdata(in range: Range<Int>) -> DispatchData {
        if range.lowerBound < 0 || range.upperBound > count {
            ringletMisuse("DispatchData.subdata(in: \(range.lowerBound)..<\(range.upperBound)) is outside the "
                + "data's \(count) bytes")
        }
        var result = DispatchData(regions: [])
        if range.isEmpty { return result }
        var r = regionIndex(containing: range.lowerBound)
        var location = range.lowerBound
        while location < range.upperBound {
            let region = regions[r]
            let within = location - start(ofRegion: r)
            let take = Swift.min(region.count - within, range.upperBound - location)
            result.appendRegion(DataRegion(storage: region.storage, start: region.start + within, count: take))
            location += take
            r += 1
        }
        return result
    }

    /// The region holding byte `location`, as data of its own, and where that
    /// region starts in this data. Traps when `location` is outside the data.
    public func region(location: Int) -> (data: DispatchData, offset: Int) {
        if location < 0 || location >= count {
            ringletMisuse("DispatchData.region(location: \(location)) is outside the data's \(count) bytes")
        }
        let r = regionIndex(containing: location)
        return (DispatchData(regions: [regions[r]]), start(ofRegion: r))
    }

    /// Calls `block` with each region's bytes and where they start in the data, in
    /// order, until it sets `stop`.
    public func enumerateBytes(_ block: (_ buffer: UnsafeBufferPointer<UInt8>, _ byteIndex: Int,
                                         _ stop: inout Bool) -> Void) {
        var stop = false
        for (index, region) in regions.enumerated() {
            block(region.bytes.bindMemory(to: UInt8.self), start(ofRegion: index), &stop)
            if stop { return }
        }
    }

    /// The Swift 4.0 spelling of `enumerateBytes(_:)`.
    @available(swift, obsoleted: 4.2, renamed: "enumerateBytes(_:)")
    public func enumerateBytes(block: (_ buffer: UnsafeBufferPointer<UInt8>, _ byteIndex: Int,
                                       _ stop: inout Bool) -> Void) {
        enumerateBytes(block)
    }

    /// Calls `body` with the bytes contiguous in memory: in place when the data has
    /// one region, else in a temporary copy freed on return.
    @_alwaysEmitIntoClient
    public func withUnsafeBytes<Result, ContentType, E: Error>(
        body: (UnsafePointer<ContentType>) throws(E) -> Result) throws(E) -> Result {
        let (bytes, copy) = _bytesForReading(alignment: Swift.max(MemoryLayout<ContentType>.alignment, 16))
        defer { copy?.deallocate() }
        if let copy {
            return try body(copy.bindMemory(to: ContentType.self,
                                            capacity: Swift.max(count / MemoryLayout<ContentType>.stride, 1)))
        }
        return try body(bytes.assumingMemoryBound(to: ContentType.self))
    }

    /// The data's bytes in one piece for `withUnsafeBytes`: its one region, or a copy
    /// (aligned to `alignment`) the caller deallocates.
    @usableFromInline
    func _bytesForReading(alignment: Int) -> (bytes: UnsafeRawPointer, copy: UnsafeMutableRawPointer?) {
        if regions.count == 1 { return (UnsafeRawPointer(regions[0].bytes.baseAddress.unsafelyUnwrapped), nil) }
        let copy = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: alignment)
        copyBytes(to: copy, from: 0..<count)
        return (UnsafeRawPointer(copy), copy)
    }

    /// Copies the first `count` bytes to `pointer`, which must hold them. Traps when
    /// `count` is negative, more than the data has, or more than `pointer` holds.
    public func copyBytes(to pointer: UnsafeMutableRawBufferPointer, count: Int) {
        checkCopyCount(count)
        if count > pointer.count {
            ringletMisuse("DispatchData.copyBytes(to:count: \(count)): the buffer holds \(pointer.count) bytes")
        }
        guard let base = pointer.baseAddress else { return }
        copyBytes(to: base, from: 0..<count)
    }

    /// Copies the bytes in `range` to `pointer`, which must hold them. Traps when
    /// `range` is outside the data or longer than `pointer`.
    public func copyBytes(to pointer: UnsafeMutableRawBufferPointer, from range: Range<Int>) {
        if range.count > pointer.count {
            ringletMisuse("DispatchData.copyBytes(to:from: \(range.lowerBound)..<\(range.upperBound)): the buffer "
                + "holds \(pointer.count) bytes")
        }
        guard let base = pointer.baseAddress else { return }
        copyBytes(to: base, from: range)
    }

    /// The Swift 3 spellings.
    @available(swift, deprecated: 4, message: "Use copyBytes(to: UnsafeMutableRawBufferPointer, count: Int) instead")
    public func copyBytes(to pointer: UnsafeMutablePointer<UInt8>, count: Int) {
        checkCopyCount(count)
        copyBytes(to: UnsafeMutableRawPointer(pointer), from: 0..<count)
    }

    @available(swift, deprecated: 4, message: "Use copyBytes(to: UnsafeMutableRawBufferPointer, from: Range<Index>) instead")
    public func copyBytes(to pointer: UnsafeMutablePointer<UInt8>, from range: Range<Int>) {
        copyBytes(to: UnsafeMutableRawPointer(pointer), from: range)
    }

    /// Traps unless `0 <= count <= self.count` (before `0..<count` could trap without a message).
    private func checkCopyCount(_ count: Int) {
        if count < 0 || count > self.count {
            ringletMisuse("DispatchData.copyBytes(to:count: \(count)) asks for more than the data's \(self.count) "
                + "bytes" + (count < 0 ? " (a negative count)" : ""))
        }
    }

    /// Copies as many bytes of `range` (nil: the whole data) as fit in `buffer`;
    /// returns how many bytes it copied. Traps when `range` is outside the data.
    @_alwaysEmitIntoClient
    public func copyBytes<DestinationType>(to buffer: UnsafeMutableBufferPointer<DestinationType>,
                                           from range: Range<Int>? = nil) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        // A buffer of more bytes than Int can count holds all of any data.
        let (bytes, overflow) = buffer.count.multipliedReportingOverflow(by: MemoryLayout<DestinationType>.stride)
        return _copyBytes(to: UnsafeMutableRawPointer(base), capacity: overflow ? Int.max : bytes, from: range)
    }

    /// `copyBytes(to:from:)` for a buffer of `capacity` bytes at `base`.
    @usableFromInline
    func _copyBytes(to base: UnsafeMutableRawPointer, capacity: Int, from range: Range<Int>?) -> Int {
        guard count > 0 else { return 0 }
        let wanted: Range<Int>
        if let range {
            if range.isEmpty { return 0 }
            if range.lowerBound < 0 || range.upperBound > count {
                ringletMisuse("DispatchData.copyBytes(from: \(range.lowerBound)..<\(range.upperBound)) is outside "
                    + "the data's \(count) bytes")
            }
            wanted = range.lowerBound..<(range.lowerBound + Swift.min(capacity, range.count))
        } else {
            wanted = 0..<Swift.min(capacity, count)
        }
        copyBytes(to: base, from: wanted)
        return wanted.count
    }

    /// Copies the bytes in `range` (within the data) to `destination`.
    func copyBytes(to destination: UnsafeMutableRawPointer, from range: Range<Int>) {
        if range.isEmpty { return }
        if range.lowerBound < 0 || range.upperBound > count {
            ringletMisuse("DispatchData.copyBytes(from: \(range.lowerBound)..<\(range.upperBound)) is outside the "
                + "data's \(count) bytes")
        }
        var r = regionIndex(containing: range.lowerBound)
        var location = range.lowerBound
        var written = 0
        while location < range.upperBound {
            let region = regions[r]
            let within = location - start(ofRegion: r)
            let take = Swift.min(region.count - within, range.upperBound - location)
            (destination + written).copyMemory(from: region.storage.base + region.start + within, byteCount: take)
            written += take
            location += take
            r += 1
        }
    }
}
