// A timer owned by an object of its own, as `Task.sleep`'s windows are.

import Testing
@testable import Ringlet

/// ManagerTimerTarget.swift.
@Suite struct ManagerTimerTargetTests {
    final class Probe: ManagerTimerTarget, @unchecked Sendable {
        let calls = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        var handle: TimerQueue.Handle?
        let deadline: UInt64

        init(deadline: UInt64) { self.deadline = deadline }

        override func armed(_ handle: TimerQueue.Handle) {
            self.handle = handle
            calls.append("armed on \(ThreadControl.threadName(ThreadControl.threadID) ?? "?")")
        }

        override func reached() {
            let now = MonotonicClock.nanoseconds
            calls.append("reached on \(ThreadControl.threadName(ThreadControl.threadID) ?? "?")"
                + (now >= deadline ? "" : " \(deadline - now) ns early"))
            done.signal()
        }
    }

    /// The manager arms the timer and tells the target its handle, then, once the
    /// window is reached (never before its deadline), calls it again and forgets the
    /// timer; both calls come on the manager thread.
    @Test func theTargetIsToldItsHandleThenThatItsWindowIsReached() {
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let probe = Probe(deadline: MonotonicClock.nanoseconds + 20_000_000)
        manager.submit(.arm(probe, deadline: probe.deadline, leeway: 1_000_000))
        #expect(waited(probe.done))
        #expect(probe.calls.values == ["armed on ringlet-m", "reached on ringlet-m"])
        let live = onManager { [handle = probe.handle] in handle.map { manager.timers.isArmed($0) } }
        #expect(live == .some(false), "the timer is still armed after its window")
    }
}
