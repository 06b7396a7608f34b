import CRinglet
import Synchronization

/// A mutual-exclusion lock whose word lives inside its owner, for objects there may be
/// many of (every `DispatchQueue` has one): no allocation of its own, unlike
/// `FutexLock`, whose word is a separate allocation so that waiters can sleep on it.
///
/// The same three states as `FutexLock` (Drepper, "Futexes Are Tricky", mutex #2: 0 free,
/// 1 held, 2 held with waiters). A waiter cannot sleep on the word itself — Swift gives no
/// stable address for an `Atomic` stored in an object — so it sleeps on one of
/// `ParkingLot.count` shared futex words, the one its lock was given at creation (a
/// parking lot, as WebKit's WTF::ParkingLot and the kernel's own futex hash share sleeping
/// places). Unlocking a lock with waiters bumps that word and wakes everyone sleeping on
/// it; each looks at its own lock again.
///
/// Cost: as `FutexLock` when uncontended (one compare-and-swap to lock, one exchange to
/// unlock); a contended unlock wakes the sleepers of every lock that shares its word.
struct ParkingLock: ~Copyable {
    private let word = Atomic<UInt32>(0)
    /// Which of the parking lot's words this lock's waiters sleep on.
    private let place: UInt8

    init() { place = ParkingLot.nextPlace() }

    /// A lock whose waiters sleep on parking word `place` (tests: locks that share one).
    init(place: UInt8) { self.place = place % UInt8(ParkingLot.count) }

    @inline(__always)
    func lock() {
        if word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
        lockContended()
    }

    @inline(never)
    private func lockContended() {
        // As FutexLock's: spin briefly, and again after each wake-up. Unlike FutexLock's,
        // a woken thread may take the lock unmarked: an unlock wakes every sleeper of
        // its parking word, so none is left to the next unlock.
        while true {
            for _ in 0..<FutexLock.spins {
                if word.load(ordering: .relaxed) == 0,
                   word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
                ThreadControl.spinHint()
            }
            // Read the parking word before marking the lock contended: an unlock after
            // the mark bumps it, so the sleep below cannot miss that unlock.
            let seen = ParkingLot.snapshot(place)
            if word.exchange(2, ordering: .sequentiallyConsistent) == 0 { return }
            ParkingLot.sleep(place, ifUnchangedFrom: seen)
        }
    }

    /// Takes the lock if it is free; false without waiting otherwise.
    func tryLock() -> Bool {
        word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
    }

    @inline(__always)
    func unlock() {
        if word.exchange(0, ordering: .sequentiallyConsistent) == 2 { ParkingLot.wakeAll(place) }
    }

    @inline(__always)
    func withLock<R>(_ body: () -> R) -> R {
        lock()
        defer { unlock() }
        return body()
    }
}

/// The shared futex words `ParkingLock` waiters sleep on, each on a cache line of its own.
enum ParkingLot {
    static let count = 64
    private static let wordsPerLine = 16
    nonisolated(unsafe) private static let words: UnsafeMutablePointer<UInt32> = {
        let words = UnsafeMutablePointer<UInt32>.allocate(capacity: count * wordsPerLine)
        words.initialize(repeating: 0, count: count * wordsPerLine)
        return words
    }()
    private static let next = Atomic<UInt8>(0)

    /// A place for a new lock: round robin, so locks made together rarely share one.
    static func nextPlace() -> UInt8 {
        next.wrappingAdd(1, ordering: .relaxed).oldValue % UInt8(count)
    }

    private static func word(_ place: UInt8) -> UnsafeMutablePointer<UInt32> {
        words + Int(place) * wordsPerLine
    }

    static func snapshot(_ place: UInt8) -> UInt32 { rl_atomic_load_u32(word(place)) }

    static func sleep(_ place: UInt8, ifUnchangedFrom seen: UInt32) {
        _ = rl_futex_wait(word(place), seen, -1)
    }

    static func wakeAll(_ place: UInt8) {
        _ = rl_atomic_add_u32(word(place), 1)
        _ = rl_futex_wake(word(place), Int32.max)
    }
}
