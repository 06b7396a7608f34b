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

    @inline(never)
    private func lockContended() {
        // Spin briefly: critical sections in the runtime are a few dozen instructions.
        for _ in 0..<64 {
            if rl_atomic_load_u32(word) == 0, rl_atomic_cas_u32(word, 0, 1) != 0 { return }
        }
        // Mark the lock contended; sleep until the holder's unlock wakes us.
        while rl_atomic_exchange_u32(word, 2) != 0 {
            _ = rl_futex_wait(word, 2, -1)
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
