// Wall-clock timers whose deadline is long past fire at once and keep their interval,
// and never stop the other timers — on both backends. On epoll a deadline that
// converted to monotonic 0 disarmed the timerfd that every timeout shares: no timer and
// no asyncAfter fired again.

import Testing
@testable import Ringlet

@Suite struct WallClockTimerTests {
    @Test func aRepeatingTimerAYearLateStopsNoTimerOnEpoll() async {
        await #expect(processExitsWith: .success) {
            WallClockTimerScenarios.yearOld(RuntimeConfiguration(cores: 2, backend: .epoll))
        }
    }

    @Test(.enabled(if: RingAvailability.works, "io_uring is refused here"))
    func aRepeatingTimerAYearLateStopsNoTimerOnIoUring() async {
        await #expect(processExitsWith: .success) {
            WallClockTimerScenarios.yearOld(RuntimeConfiguration(cores: 2, backend: .ioUring))
        }
    }
}

enum WallClockTimerScenarios {
    static func yearOld(_ configuration: RuntimeConfiguration) {
        startRuntime(configuration)
        let queue = DispatchQueue(label: "test.wall.old")
        let fires = AtomicCounter()
        let firstData = AtomicCounter()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(wallDeadline: .now() - 366.0 * 86_400, repeating: .milliseconds(50), leeway: .milliseconds(1))
        timer.setEventHandler {
            if fires.increment() == 1 { firstData.increment(by: Int(timer.data)) }
        }
        timer.activate()
        // It fires at once, counting the intervals it missed, then on its interval.
        #expect(eventually { fires.value >= 3 })
        #expect(firstData.value > 600_000_000, "the first fire counted \(firstData.value) missed intervals")
        // Other timers still fire.
        let after = DispatchSemaphore(value: 0)
        queue.asyncAfter(deadline: .now() + .milliseconds(5)) { after.signal() }
        #expect(waited(after))
        let other = DispatchSource.makeTimerSource(queue: queue)
        let otherFired = DispatchSemaphore(value: 0)
        other.schedule(deadline: .now() + .milliseconds(5))
        other.setEventHandler { otherFired.signal() }
        other.activate()
        #expect(waited(otherFired))
        timer.cancel()
        other.cancel()
    }
}
