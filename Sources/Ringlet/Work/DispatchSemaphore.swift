import Synchronization

/// A counting semaphore; source-compatible with `Dispatch.DispatchSemaphore`.
///
/// `wait()` takes one from the value and sleeps while it is negative; `signal()`
/// gives one back and wakes one waiter. Uncontended calls are a single atomic
/// operation. Releasing a semaphore whose value is below the value it was created
/// with traps (GCD's rule: some `wait()` was never balanced by a `signal()`).
// @unchecked Sendable: the value and wake-ups are atomics.
public class DispatchSemaphore: DispatchObject, @unchecked Sendable {
    private let initialValue: Int
    private let value: Atomic<Int>
    /// Wake-ups deposited by `signal()` for sleeping waiters.
    private let wakeups = Atomic<Int>(0)
    private let event = FutexEvent()

    /// Creates a semaphore. Traps when `value` is negative.
    public init(value: Int) {
        if value < 0 {
            ringletMisuse("DispatchSemaphore(value: \(value)): the starting value must be 0 or more")
        }
        initialValue = value
        self.value = Atomic(value)
        super.init()
    }

    deinit {
        let current = value.load(ordering: .acquiring)
        if current < initialValue {
            ringletMisuse("\(diagnosticName) was released while in use: its value is \(current), below the "
                + "starting value \(initialValue); every wait() must be balanced by a signal() first")
        }
        event.deallocate()
    }

    var diagnosticName: String { "DispatchSemaphore(value: \(initialValue))" }

    /// Increments the value; wakes one waiter if any. Returns 1 when a waiter was
    /// woken, else 0.
    @discardableResult
    public func signal() -> Int {
        let newValue = value.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
        if newValue > 0 { return 0 }
        wakeups.wrappingAdd(1, ordering: .acquiringAndReleasing)
        event.post(wake: 1)
        return 1
    }

    /// Decrements the value and waits while it is negative.
    public func wait() { _ = waitFor(timeoutNanoseconds: -1) }

    /// Decrements the value and waits while it is negative, at most until `timeout`.
    public func wait(timeout: DispatchTime) -> DispatchTimeoutResult {
        waitFor(timeoutNanoseconds: timeout.relativeNanoseconds)
    }

    /// As `wait(timeout:)`, with a wall-clock deadline.
    public func wait(wallTimeout: DispatchWallTime) -> DispatchTimeoutResult {
        waitFor(timeoutNanoseconds: wallTimeout.relativeNanoseconds)
    }

    private func waitFor(timeoutNanoseconds: Int64) -> DispatchTimeoutResult {
        if value.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue >= 0 { return .success }
        let deadline = WaitDeadline(relativeNanoseconds: timeoutNanoseconds)
        return BlockingWait.perform(.semaphore(self), timed: timeoutNanoseconds >= 0) {
            while true {
                let seen = event.snapshot
                if takeWakeup() { return .success }
                guard let remaining = deadline.remaining else {
                    // Timed out: give our decrement back, unless a signal() already
                    // counted us as a waiter — then its wake-up is ours to take.
                    var current = value.load(ordering: .acquiring)
                    while current < 0 {
                        let (exchanged, original) = value.compareExchange(
                            expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
                        if exchanged { return .timedOut }
                        current = original
                    }
                    while !takeWakeup() {
                        let again = event.snapshot
                        if takeWakeup() { break }
                        _ = event.wait(ifUnchangedFrom: again, timeoutNanoseconds: 1_000_000)
                    }
                    return .success
                }
                _ = BlockingWait.sleep(on: event, seen: seen, timeoutNanoseconds: remaining)
            }
        }
    }

    private func takeWakeup() -> Bool {
        var current = wakeups.load(ordering: .acquiring)
        while current > 0 {
            let (exchanged, original) = wakeups.compareExchange(
                expected: current, desired: current - 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }
}
