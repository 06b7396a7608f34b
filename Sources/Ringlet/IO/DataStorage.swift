
/// One contiguous block of bytes a `DispatchData` refers to, freed once no data
/// refers to it any more, by the rule it was created with.
// @unchecked Sendable: the bytes are immutable once shared; the release runs once, from deinit.
final class DataStorage: @unchecked Sendable {
    /// How the bytes are given back.
    enum Release {
        /// Allocated by Ringlet (`UnsafeMutableRawPointer.allocate`).
        case deallocate
        /// The program's: free(3).
        case free
        /// The program's: munmap(2) of `length` bytes.
        case unmap(length: Int)
        /// The program's own deallocator, run on `queue` (nil: the default global queue).
        case custom(DispatchQueue?, () -> Void)
        /// A read buffer of a channel: back to the I/O buffer pool.
        case pool(IOBufferPool)
        /// A socket's receive buffer: back to the receive buffers (System/ProvidedBuffers.swift).
        case provided(ProvidedBuffers, UInt16)
        /// A layer's own bytes (an event loop's buffer): the closure runs where the last
        /// data referring to them goes, on that thread (Net/DispatchData+Borrowed.swift).
        case inline(() -> Void)
    }

    let base: UnsafeMutableRawPointer
    let capacity: Int
    private let release: Release

    init(base: UnsafeMutableRawPointer, capacity: Int, release: Release) {
        self.base = base
        self.capacity = capacity
        self.release = release
    }

    /// A copy of `bytes` in storage Ringlet allocates.
    convenience init(copying bytes: UnsafeRawBufferPointer) {
        let base = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let source = bytes.baseAddress, bytes.count > 0 {
            base.copyMemory(from: source, byteCount: bytes.count)
        }
        self.init(base: base, capacity: bytes.count, release: .deallocate)
    }

    deinit {
        switch release {
        case .deallocate: base.deallocate()
        case .free: Memory.free(base)
        case .unmap(let length): Memory.unmap(base, length: length)
        case .custom(let queue, let body):
            // GCD runs a custom destructor asynchronously on its queue (the default
            // global queue when none is given), never inside the last release.
            let destructor = UncheckedSendable(body)
            (queue ?? DispatchQueue.global()).async { destructor.value() }
        case .pool(let pool): pool.giveBack(base, capacity: capacity)
        case .provided(let buffers, let id): buffers.give(id)
        case .inline(let body): body()
        }
    }
}

/// A slice of one storage: `count` bytes from `start`.
struct DataRegion {
    let storage: DataStorage
    let start: Int
    let count: Int

    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.base + start, count: count)
    }
}

/// A value (a program's closure: a destructor, a barrier, a cleanup handler) handed
/// to another thread as GCD hands blocks, without a Sendable check.
// @unchecked Sendable: that is its purpose; GCD's API takes these closures as they are.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
