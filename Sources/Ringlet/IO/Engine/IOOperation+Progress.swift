// An operation's progress as the manager tracks it (manager thread only).
extension IOOperation {
    /// Records the first error; the operation ends once its requests are back.
    func fail(_ error: Int32) {
        if failure == 0 { failure = error }
    }

    /// A write request covering data from `index` failed.
    func fail(_ error: Int32, writtenBefore index: Int) {
        fail(error)
        failedAt = Swift.min(failedAt ?? Int.max, index)
    }

    /// The first byte of the write data that is not known to be written.
    var firstUnwritten: Int {
        var first = usesOffsets ? Swift.min(requested, failedAt ?? Int.max) : requested
        for hole in holes { first = Swift.min(first, hole.dataIndex) }
        return first
    }

    /// Where the bytes of the write data at `index` are (they stay valid: the
    /// operation holds the data).
    func writePointer(at index: Int) -> UnsafeMutableRawPointer {
        let r = writeData.regionIndex(containing: index)
        let region = writeData.regions[r]
        return region.storage.base + region.start + (index - writeData.start(ofRegion: r))
    }

    /// Bytes of the write data from `index` to the end of its region.
    func contiguousBytes(at index: Int) -> Int {
        let r = writeData.regionIndex(containing: index)
        return writeData.regions[r].count - (index - writeData.start(ofRegion: r))
    }

    /// A read at `offset` came back: deliver it, and whatever it joins, in file order.
    func insertPiece(offset: Int64, _ region: DataRegion) {
        if offset == deliverOffset && pieces.isEmpty {
            deliverOffset += Int64(region.count)
            append(region)
            return
        }
        var index = pieces.count
        while index > 0 && pieces[index - 1].offset > offset { index -= 1 }
        pieces.insert((offset, region), at: index)
        var joined = 0
        while joined < pieces.count && pieces[joined].offset == deliverOffset {
            deliverOffset += Int64(pieces[joined].region.count)
            append(pieces[joined].region)
            joined += 1
        }
        if joined > 0 { pieces.removeFirst(joined) }
    }

    /// Drops pieces that can no longer be delivered in order (after an error);
    /// returns their bytes, for the budget.
    func dropPieces() -> Int {
        let bytes = pieces.reduce(0) { $0 + $1.region.count }
        pieces = []
        return bytes
    }
}
