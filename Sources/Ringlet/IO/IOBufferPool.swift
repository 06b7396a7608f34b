import Synchronization

/// The read buffers of every channel, bounded by `ioBufferBytes`.
///
/// `held` counts the bytes the runtime holds for reads: in flight on the ring, or
/// read and waiting for their handler. The manager reserves before it issues a read
/// and stops reading when the budget is spent; a handler's return gives its bytes
/// back. So a slow consumer stops its channel's reads instead of growing memory.
/// Data a handler keeps after it returns is the program's memory, not the runtime's:
/// it is no longer counted, and its buffer comes back here when the data goes.
///
/// Buffers of exactly `chunkBytes` are kept for reuse while the kept ones and the
/// held bytes fit the budget: a long read cycles through warm buffers instead of
/// faulting in fresh pages for every chunk.
// @unchecked Sendable: `held` and the wake flag are atomics; the kept buffers under `lock`.
final class IOBufferPool: @unchecked Sendable {
    let chunkBytes: Int
    let budget: Int
    private let held = Atomic<Int>(0)
    /// Set by the manager when a read waits for budget; the next release clears it
    /// and wakes the manager.
    private let waiting = Atomic<Bool>(false)
    private let lock = FutexLock()
    private var kept: [UnsafeMutableRawPointer] = []  // under `lock`
    private let peak = Atomic<Int>(0)                 // statistics; written by the manager only

    init(chunkBytes: Int, budget: Int) {
        self.chunkBytes = chunkBytes
        self.budget = budget
    }

    deinit {
        for buffer in kept { buffer.deallocate() }
        lock.deallocate()
    }

    /// Bytes held now (statistics and tests).
    var heldBytes: Int { held.load(ordering: .relaxed) }
    /// The most bytes held at once since start.
    var peakHeldBytes: Int { peak.load(ordering: .relaxed) }
    /// True while a read waits for budget (statistics and tests).
    var waitsForBudget: Bool { waiting.load(ordering: .relaxed) }

    /// Reserves `bytes` of the budget (manager only). False when it would exceed the
    /// budget: the caller's read waits until a release wakes the manager.
    func reserve(_ bytes: Int) -> Bool {
        var current = held.load(ordering: .relaxed)
        while true {
            if current + bytes > budget && current > 0 { return false }
            let (exchanged, original) = held.compareExchange(expected: current, desired: current + bytes,
                                                              ordering: .acquiringAndReleasing)
            if exchanged {
                let now = current + bytes
                if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
                return true
            }
            current = original
        }
    }

    /// A reservation failed: ask to be woken by the next release (manager only).
    /// Returns true when budget came back in between (retry now).
    func waitForRelease(_ bytes: Int) -> Bool {
        waiting.store(true, ordering: .sequentiallyConsistent)
        return held.load(ordering: .sequentiallyConsistent) + bytes <= budget
    }

    /// Gives `bytes` back (any thread). True when the manager waits for budget and
    /// must be woken.
    func release(_ bytes: Int) -> Bool {
        if bytes == 0 { return false }
        held.subtract(bytes, ordering: .sequentiallyConsistent)
        return waiting.load(ordering: .sequentiallyConsistent)
            && waiting.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// A buffer of `capacity` bytes: a kept one when `capacity` is a chunk.
    func take(capacity: Int) -> UnsafeMutableRawPointer {
        if capacity == chunkBytes, let buffer = lock.withLock({ kept.popLast() }) { return buffer }
        return UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 4096)
    }

    /// Memory pressure reached `.critical` (MemoryPressureWatch): the pages of the buffers
    /// kept for reuse go back to the system, the buffers themselves stay kept and are
    /// faulted in again when next used. Returns the bytes given back.
    func trim() -> Int {
        lock.withLock {
            var given = 0
            for buffer in kept where Memory.giveBackPages(buffer, length: chunkBytes) { given += chunkBytes }
            return given
        }
    }

    /// A buffer comes back (its last data is gone, or its read failed).
    func giveBack(_ buffer: UnsafeMutableRawPointer, capacity: Int) {
        if capacity == chunkBytes {
            let keep = lock.withLock { () -> Bool in
                if (kept.count + 1) * chunkBytes + held.load(ordering: .relaxed) > budget { return false }
                kept.append(buffer)
                return true
            }
            if keep { return }
        }
        buffer.deallocate()
    }
}
