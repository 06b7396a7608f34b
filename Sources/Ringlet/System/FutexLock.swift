import CRinglet

/// A mutual-exclusion lock built on a futex word: three states after Drepper's
/// "Futexes Are Tricky" (2011), mutex #2 — 0 unlocked, 1 locked, 2 locked with waiters.
///
/// Ringlet cannot use `Synchronization.Mutex` (absent in Embedded Swift) nor pthread
/// mutexes (they would pull libc into the Swift target), so every lock in the runtime
/// is one of these. The word lives in its own allocation so its address is stable;
/// the owner calls `deallocate()` once, in its `deinit`.
///
/// Cost: one compare-and-swap to lock and one exchange to unlock when uncontended; a
/// futex(2) call only when another thread is waiting. Not recursive: locking twice
/// from one thread deadlocks.
// @unchecked Sendable: a pointer to a word used only through atomics and futex(2).
struct FutexLock: @unchecked Sendable {
    let word: UnsafeMutablePointer<UInt32>

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    func deallocate() { word.deallocate() }

    @inline(__always)
    func lock() {
        if rl_atomic_cas_u32(word, 0, 1) != 0 { return }
        lockContended()
    }

    /// How many looks a contended lock takes before its thread sleeps, with a spin hint
    /// between them, and again after each wake-up (`ParkingLock` too). Critical sections
    /// in the runtime are a few dozen instructions: a holder on another core is usually
    /// done within them. A woken thread that went straight back to sleep when its one
    /// look found the lock taken again would let two threads taking one lock by turns
    /// fall into sleeping on it by turns.
    static let spins = 64

    @inline(never)
    private func lockContended() {
        // A thread that slept takes the lock marked contended: others may still sleep,
        // and only the mark makes the next unlock wake one of them.
        var mark: UInt32 = 1
        while true {
            for _ in 0..<Self.spins {
                if rl_atomic_load_u32(word) == 0, rl_atomic_cas_u32(word, 0, mark) != 0 { return }
                rl_cpu_relax()
            }
            // Mark the lock contended; sleep until the holder's unlock wakes us.
            if rl_atomic_exchange_u32(word, 2) == 0 { return }
            _ = rl_futex_wait(word, 2, -1)
            mark = 2
        }
    }

    /// Takes the lock if it is free; false without waiting otherwise.
    func tryLock() -> Bool { rl_atomic_cas_u32(word, 0, 1) != 0 }

    @inline(__always)
    func unlock() {
        if rl_atomic_exchange_u32(word, 0) == 2 {
            _ = rl_futex_wake(word, 1)
        }
    }

    @inline(__always)
    func withLock<R>(_ body: () -> R) -> R {
        lock()
        defer { unlock() }
        return body()
    }
}
