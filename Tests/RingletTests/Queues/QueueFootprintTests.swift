// What a queue costs in memory besides its pending items: the bytes `ringlet bench`'s
// memory row counts per queue (Measuring, "Memory").

import CRingletTestSupport
import Testing
@testable import Ringlet

func heapBlockBytes(_ block: UnsafeMutableRawPointer) -> Int { Int(rl_test_heap_block_bytes(block)) }
func heapBlockBytes<T>(_ block: UnsafeMutablePointer<T>) -> Int { heapBlockBytes(UnsafeMutableRawPointer(block)) }

@Suite struct QueueFootprintTests {
    /// The heap blocks a queue holds of its own: its object and its embedded token node.
    /// The lock word lives inside the object (`ParkingLock`), so there is no third block.
    static func heapBytes(of queue: DispatchQueue) -> Int {
        heapBlockBytes(Unmanaged.passUnretained(queue).toOpaque()) + heapBlockBytes(queue.embeddedToken)
    }

    /// 200 bytes of object (the 32-bit counters of `QueueState`, `width` derived from the
    /// kind, the requested QoS in two bytes, the lock word inside) and the token node's
    /// block (48 bytes, 56 usable). It was 248 + 56 + a 24-byte block for the lock word,
    /// then 216 + 56.
    ///
    /// The smallest of sixteen queues: glibc hands out a free chunk up to 31 bytes
    /// larger than asked when splitting it would leave too small a remainder, so one
    /// queue made while other tests free memory may measure a few bytes more than it
    /// asked for (272 was seen in a full run).
    @Test func aSerialQueueHoldsTwoBlocksOfAtMostTwoHundredFiftySixBytes() {
        let queues = (0..<16).map { DispatchQueue(label: "test.footprint.\($0)") }
        let bytes = queues.map { Self.heapBytes(of: $0) }.min() ?? 0
        #expect(bytes <= 256, "a serial queue holds \(bytes) bytes of heap")
        let queue = queues[0]
        #expect(queue.qos == .unspecified)
        let qos = DispatchQoS(qosClass: .utility, relativePriority: -15)
        #expect(DispatchQueue(label: "test.footprint.qos", qos: qos).qos == qos)
    }
}

/// The queue's lock keeps its word in the queue and parks waiters on shared words.
@Suite struct ParkingLockTests {
    final class Counted: @unchecked Sendable {
        let lock = ParkingLock(place: 7)
        var value = 0
    }

    /// Threads that contend long enough to sleep, on two locks that share a parking
    /// word (wake-ups for one reach sleepers of the other), lose no increment and never
    /// deadlock.
    @Test func contendedLocksSharingParkingWordsLoseNothing() {
        let locks = [Counted(), Counted()]
        let rounds = 2_000
        let threads = 4
        let done = onOwnThreads(threads) { thread in
            for round in 0..<rounds {
                let counted = locks[(round + thread) % 2]
                counted.lock.withLock {
                    counted.value += 1
                    // Hold the lock a while now and then, so waiters give up spinning.
                    if round % 64 == 0 { for _ in 0..<2_000 { ThreadControl.spinHint() } }
                }
            }
        }
        #expect(waited(done))
        let total = locks[0].lock.withLock { locks[0].value } + locks[1].lock.withLock { locks[1].value }
        #expect(total == rounds * threads)
    }
}
