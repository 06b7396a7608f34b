// FutexLock under contention: the runtime's locks (the scheduler's, the pool's, each
// manager request stack's) are all of this kind.

import Testing
@testable import Ringlet

@Suite struct FutexLockTests {
    final class Counted: @unchecked Sendable {
        let lock = FutexLock()
        var value = 0
        deinit { lock.deallocate() }
    }

    /// Four threads on one lock, each now and then holding it long enough that the
    /// others give up spinning and sleep: no increment is lost, and every sleeper is
    /// woken. A woken thread takes the lock marked contended; taking it unmarked after
    /// a sleep would leave the other sleepers to an unlock that wakes no one, and the
    /// group would time out.
    @Test func sleepersWokenByTurnsLoseNothingAndAllFinish() {
        let counted = Counted()
        let rounds = 4_000
        let threads = 4
        let done = onOwnThreads(threads) { _ in
            for round in 0..<rounds {
                counted.lock.withLock {
                    counted.value += 1
                    if round % 32 == 0 { for _ in 0..<4_000 { ThreadControl.spinHint() } }
                }
            }
        }
        #expect(waited(done))
        #expect(counted.lock.withLock { counted.value } == rounds * threads)
    }
}
