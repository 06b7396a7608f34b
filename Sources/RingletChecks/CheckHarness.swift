import Ringlet
import Synchronization

/// A tiny test harness that also works in Embedded Swift (no XCTest, no Foundation):
/// each check returns nil when it passed or a message saying what went wrong.
/// The program ends with "N passed, N failed" and exits non-zero on any failure.
/// @unchecked Sendable: only the main thread runs checks and reads the tallies.
final class CheckHarness: @unchecked Sendable {
    private(set) var passed = 0
    private(set) var failed = 0

    func run(_ name: String, _ body: () -> String?) {
        if let failure = body() {
            failed += 1
            print("FAIL \(name): \(failure)")
        } else {
            passed += 1
            print("ok   \(name)")
        }
    }

    /// A check left out here, said so with the reason (never silently).
    func skip(_ name: String, because reason: String) {
        print("skip \(name): \(reason)")
    }
}

/// How long a check waits for something that normally takes milliseconds: counted
/// from each wait, so a check that uses it up cannot fail the checks after it.
var timeout: DispatchTime { .now() + .seconds(20) }

/// A counter shared between threads.
final class SharedCounter: @unchecked Sendable {
    private let storage = Atomic<Int>(0)
    @discardableResult
    func increment(by delta: Int = 1) -> Int { storage.wrappingAdd(delta, ordering: .acquiringAndReleasing).newValue }
    func decrement() { storage.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
    var value: Int { storage.load(ordering: .acquiring) }

    /// Raises the stored maximum to `candidate` if larger.
    func raiseMaximum(to candidate: Int) {
        var current = storage.load(ordering: .relaxed)
        while candidate > current {
            let (done, original) = storage.compareExchange(expected: current, desired: candidate,
                                                          ordering: .acquiringAndReleasing)
            if done { return }
            current = original
        }
    }
}

/// An append-only record of integers, guarded by a semaphore used as a mutex.
final class Recorder: @unchecked Sendable {
    private let mutex = DispatchSemaphore(value: 1)
    private var values: [Int] = []

    func append(_ value: Int) {
        mutex.wait()
        values.append(value)
        mutex.signal()
    }

    var snapshot: [Int] {
        mutex.wait()
        defer { mutex.signal() }
        return values
    }
}
