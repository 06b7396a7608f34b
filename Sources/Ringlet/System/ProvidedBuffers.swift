import CRinglet
import Synchronization

/// The buffers a socket's continuous receive reads into (Net/RingSocket+Stream.swift):
/// `count` buffers of `size` bytes, allocated on the first such receive and kept. On
/// io_uring with provided-buffer rings (Linux 5.19) the kernel picks one per
/// completion; elsewhere the socket engine takes one from the free list per receive.
/// A buffer goes back when the last data holding it is released, on any thread — so a
/// handler that keeps its data stops the receives once every buffer is held: back-
/// pressure instead of memory growth.
// @unchecked Sendable: `free`, `outstanding` and `starved` under `lock`; `ring` is set
// once by the manager before the first receive.
final class ProvidedBuffers: @unchecked Sendable {
    /// The buffer group the ring knows these by.
    static let group: UInt16 = 0

    let count: Int
    let size: Int
    let memory: UnsafeMutableRawPointer
    /// The kernel's ring of these buffers (nil: the free list serves).
    private(set) var ring: OpaquePointer?
    private let lock = FutexLock()
    private var free: [UInt16]
    /// Buffers the program holds now (delivered, not given back).
    private var outstanding = 0
    /// A receive waits for a buffer: the next one given back calls `returned`.
    private var starved = false
    /// Set once by the socket engine before the first receive.
    var returned: () -> Void = {}
    /// Times a receive had to wait for a buffer.
    let waits = Atomic<Int>(0)

    init(count: Int, size: Int) {
        self.count = count
        self.size = size
        memory = UnsafeMutableRawPointer.allocate(byteCount: count * size, alignment: 4096)
        free = (0..<count).reversed().map { UInt16($0) }
    }

    deinit { lock.deallocate() }

    /// Hands the buffers to the kernel as a provided-buffer ring (the ring's owner, before
    /// the first receive). The error when the kernel refuses (EINVAL: before 5.19; on
    /// epoll, ENOTSUP): the free list serves then.
    func register(on ring: Ring) -> Errno? {
        guard let handle = ring.ringHandle else { return .notSupported }
        var error: Int32 = 0
        guard let buffers = rl_buffer_ring_register(handle, Self.group, UInt32(count), &error) else {
            return Errno(negated: error)
        }
        for id in 0..<count { rl_buffer_ring_give(buffers, pointer(UInt16(id)), UInt32(size), UInt16(id)) }
        lock.withLock {
            free = []
            self.ring = buffers
        }
        return nil
    }

    func pointer(_ id: UInt16) -> UnsafeMutableRawPointer { memory + Int(id) * size }

    /// The free list's next buffer, now the program's (nil: none; the next one given back
    /// calls `returned`).
    func take() -> UInt16? {
        lock.withLock {
            guard let id = free.popLast() else {
                starved = true
                waits.wrappingAdd(1, ordering: .relaxed)
                return nil
            }
            outstanding += 1
            return id
        }
    }

    /// The kernel picked buffer `id` for a completion: it is the program's now.
    func taken(_ id: UInt16) { lock.withLock { outstanding += 1 } }

    /// The kernel had no buffer (ENOBUFS). True: the receive waits for one to come back;
    /// false: some came back meanwhile, so it can go again at once.
    func waitForOne() -> Bool {
        lock.withLock {
            if outstanding < count { return false }
            starved = true
            waits.wrappingAdd(1, ordering: .relaxed)
            return true
        }
    }

    /// Buffer `id` is free again (any thread; never waits for long).
    func give(_ id: UInt16) {
        let wake = lock.withLock { () -> Bool in
            outstanding -= 1
            if let ring { rl_buffer_ring_give(ring, pointer(id), UInt32(size), id) } else { free.append(id) }
            let wake = starved
            starved = false
            return wake
        }
        if wake { returned() }
    }

    /// Buffers the program holds now.
    var held: Int { lock.withLock { outstanding } }

    /// Whether the kernel picks them (any thread).
    var providedToKernel: Bool { lock.withLock { ring != nil } }

    /// `bytes` bytes of buffer `id` as data: the buffer itself, given back when the data
    /// goes, or a copy when they are a small part of it (and the buffer goes back now).
    func data(_ id: UInt16, bytes: Int) -> DispatchData {
        if bytes * 4 < size {
            let copy = DispatchData(bytes: UnsafeRawBufferPointer(start: pointer(id), count: bytes))
            give(id)
            return copy
        }
        return DispatchData(regions: [DataRegion(storage: DataStorage(base: pointer(id), capacity: size,
                                                                      release: .provided(self, id)),
                                                 start: 0, count: bytes)])
    }
}
