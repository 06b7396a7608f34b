// Workers blocked in the kernel (a plain sleep, a blocking syscall) while work waits
// are noticed by the stall watch and covered by the reserve within about two
// `coverCheckMilliseconds` periods; the thread count never moves; a worker that spins
// on the CPU is never mistaken for a blocked one. Child processes on a 2-core pool:
// 2 high-band workers, 1 utility, 1 background, 2 reserve.

import CRingletTestSupport
import Testing
@testable import Ringlet

@Suite struct KernelCoverTests {
    /// Every band worker sleeps in the kernel (not a Ringlet wait); a new default item
    /// and a new utility item still start within a fraction of the sleep.
    @Test func itemsRunWhileEveryBandWorkerSleepsInTheKernel() async {
        await #expect(processExitsWith: .success) { KernelCoverScenarios.everyBandAsleep() }
    }

    /// Without the cover (`coverCheckMilliseconds` 0) the same item waits for a sleeper:
    /// the check above is not satisfied by chance.
    @Test func withoutTheCoverTheItemWaitsForASleeper() async {
        await #expect(processExitsWith: .success) { KernelCoverScenarios.noCover() }
    }

    /// Workers that spin on the CPU are busy, not blocked: never covered.
    @Test(.enabled(if: !threadSanitizerActive, "under ThreadSanitizer a spinner may sleep in the sanitizer's runtime"))
    func spinningWorkersAreNotCovered() async {
        await #expect(processExitsWith: .success) { KernelCoverScenarios.spinners() }
    }

    /// 256 items that each sleep 20 ms on the default global queue: the high band and the
    /// reserve share them, and the process never has more threads than at start.
    @Test func manySleepingItemsUseTheReserveAndNoNewThread() async {
        await #expect(processExitsWith: .success) { KernelCoverScenarios.manySleepers() }
    }
}

enum KernelCoverScenarios {
    /// How long a sleeper sleeps: far longer than the cover may take.
    static let sleepNanoseconds: Int64 = 3_000_000_000

    /// Puts `count` sleepers on `queue`, each in the kernel for `sleepNanoseconds`;
    /// returns once all have started. `awake` counts the sleepers that woke.
    static func startSleepers(_ count: Int, on queue: DispatchQueue, group: DispatchGroup,
                              awake: AtomicCounter) -> Bool {
        let started = AtomicCounter()
        for _ in 0..<count {
            queue.async(group: group) {
                started.increment()
                rl_sleep_ns(sleepNanoseconds)
                awake.increment()
            }
        }
        return eventually { started.value == count }
    }

    /// Submits an item on `queue`; true when it ran while no sleeper had woken yet:
    /// a thread other than the sleepers' ran it.
    static func runsBeforeAnySleeperWakes(on queue: DispatchQueue, awake: AtomicCounter) -> Bool {
        let ranWhileAsleep = AtomicCounter(), ran = AtomicCounter()
        queue.async {
            if awake.value == 0 { ranWhileAsleep.increment() }
            ran.increment()
        }
        _ = eventually { ran.value == 1 }
        return ranWhileAsleep.value == 1
    }

    static func everyBandAsleep() {
        startRuntime(twoCoreConfiguration())
        let threadsBefore = Runtime.statistics.processThreads
        let sleepers = DispatchGroup()
        let awake = AtomicCounter()
        guard startSleepers(2, on: .global(), group: sleepers, awake: awake),
              startSleepers(1, on: .global(qos: .utility), group: sleepers, awake: awake),
              startSleepers(1, on: .global(qos: .background), group: sleepers, awake: awake) else {
            Issue.record("the sleepers did not start")
            return
        }
        #expect(runsBeforeAnySleeperWakes(on: .global(), awake: awake), "a default item waited for a sleeper")
        #expect(runsBeforeAnySleeperWakes(on: .global(qos: .utility), awake: awake),
                "a utility item waited for a sleeper")
        #expect(Runtime.statistics.workersCoveredInKernel >= 1)
        #expect(Runtime.statistics.processThreads == threadsBefore, "a thread was added")
        #expect(waited(sleepers))
        #expect(eventually { Runtime.statistics.workersBlockedInKernel == 0 })
    }

    static func noCover() {
        var configuration = twoCoreConfiguration()
        configuration.coverCheckMilliseconds = 0
        startRuntime(configuration)
        let sleepers = DispatchGroup()
        let awake = AtomicCounter()
        guard startSleepers(2, on: .global(), group: sleepers, awake: awake) else {
            Issue.record("the sleepers did not start")
            return
        }
        #expect(!runsBeforeAnySleeperWakes(on: .global(), awake: awake), "the item ran while both sleepers slept")
        #expect(Runtime.statistics.workersCoveredInKernel == 0)
        #expect(waited(sleepers))
    }

    static func spinners() {
        startRuntime(twoCoreConfiguration())
        let stop = Gate()
        let spinning = AtomicCounter()
        for _ in 0..<2 {
            DispatchQueue.global().async {
                spinning.increment()
                while !stop.isOpen {}
            }
        }
        guard eventually({ spinning.value == 2 }) else {
            Issue.record("the spinners did not start")
            return
        }
        let ran = AtomicCounter()
        DispatchQueue.global().async { ran.increment() }  // waits: both high-band workers spin
        // The watch has looked many times while the item waited.
        let wakeups = Runtime.statistics.managerWakeups
        #expect(eventually { Runtime.statistics.managerWakeups >= wakeups + 20 })
        #expect(Runtime.statistics.workersCoveredInKernel == 0, "a spinning worker was covered")
        #expect(ran.value == 0)
        stop.open()
        #expect(eventually { ran.value == 1 })
    }

    static func manySleepers() {
        startRuntime(twoCoreConfiguration())
        let threadsBefore = Runtime.statistics.processThreads
        let group = DispatchGroup()
        let meter = OverlapMeter()
        for _ in 0..<256 {
            DispatchQueue.global().async(group: group) { meter.measure { rl_sleep_ns(20_000_000) } }
        }
        var peak = threadsBefore
        let start = monotonicNanoseconds
        while group.wait(timeout: .now() + .milliseconds(5)) == .timedOut, secondsSince(start) < 30 {
            peak = max(peak, Runtime.statistics.processThreads)
        }
        #expect(group.wait(timeout: deadline()) == .success)
        // The two high-band workers alone sleep two at a time; the covering reserve adds two.
        #expect(meter.maximum > 2, "at most \(meter.maximum) items slept at once: the reserve did not cover")
        #expect(meter.maximum <= 4, "\(meter.maximum) items slept at once: more than the high band and reserve")
        #expect(peak == threadsBefore, "the process reached \(peak) threads from \(threadsBefore)")
    }
}
