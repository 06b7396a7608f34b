// What the sensor rows of `ringlet bench` share between the two sides: the device that
// feeds the workload's pipe, and the energy model its estimate row applies (the
// Measuring article, "The energy estimate"). Imports neither Dispatch nor Ringlet.
import Glibc
import Synchronization

/// A plain thread standing in for a device: writes `bytes` bytes to `fd` every
/// `intervalNanoseconds` until stopped. Its own wake-ups are the same on both sides.
package final class BenchPipeFeeder: @unchecked Sendable {
    private let fd: Int32
    private let bytes: Int
    private let interval: UInt64
    private let stopFlag = Atomic<Bool>(false)
    private var thread = pthread_t()
    package private(set) var writes = 0

    package init(fd: Int32, bytes: Int, intervalNanoseconds: UInt64) {
        self.fd = fd
        self.bytes = bytes
        interval = intervalNanoseconds
    }

    package func start() { thread = benchStartThread { self.run() } }

    /// Stops the thread and waits for it; `writes` is final afterwards.
    package func stop() {
        stopFlag.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
    }

    private func run() {
        let sample = [UInt8](repeating: 0x42, count: bytes)
        var next = benchNow() + interval
        while !stopFlag.load(ordering: .relaxed) {
            benchSleep(until: next)
            next += interval
            if sample.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 { writes += 1 }
        }
    }
}

/// The energy estimate of the sensor-energy-estimate row, for machines without a
/// readable RAPL: E = CPU seconds × `activeWatts` + wake-ups × `wakeJoules`. The
/// constants are assumptions for a small ARM board, documented with their source in
/// the Measuring article ("The energy estimate"); the row compares the two runtimes
/// under the same model, so only the ratio of the constants shapes the ratio.
package enum BenchEnergyModel {
    /// Power of one busy core above idle: a Raspberry Pi 4 (4 × Cortex-A72, 1.5 GHz)
    /// draws about 2.7 W idle and 6.4 W with all four cores busy, so ~0.9 W per core.
    package static let activeWatts = 0.9
    /// Energy of one wake-up beyond the CPU time it runs: leaving and re-entering an idle
    /// state and refilling caches, taken as ~25 µs of a busy core (0.9 W × 25 µs ≈ 22 µJ).
    package static let wakeJoules = 22e-6

    /// Microjoules for `cpuNanoseconds` of CPU time and `wakeups` context switches.
    package static func microjoules(cpuNanoseconds: Double, wakeups: Double) -> Double {
        (cpuNanoseconds / 1e9 * activeWatts + wakeups * wakeJoules) * 1e6
    }
}

/// The fewest wake-ups a runtime could make on a timer-and-pipe workload: one thread
/// waking once per distinct timer window — timers whose windows overlap merged into one
/// wake-up, whatever their QoS — and once per fd event, plus the device thread's own
/// wake-ups. The sensor rows print it beside the measured figures.
package enum BenchWakeupFloor {
    /// A repeating timer of the workload: first deadline `phase` after the start.
    package struct Timer {
        package let interval: UInt64
        package let leeway: UInt64
        package let phase: UInt64

        package init(interval: UInt64, leeway: UInt64, phase: UInt64) {
            self.interval = interval
            self.leeway = leeway
            self.phase = phase
        }
    }

    /// Distinct windows in `nanoseconds`: wake at the earliest window end, fire every
    /// timer whose deadline has come, repeat.
    package static func windows(_ timers: [Timer], nanoseconds: UInt64) -> Int {
        var deadlines = timers.map(\.phase)
        var count = 0
        while true {
            guard let wake = timers.indices.map({ deadlines[$0] + timers[$0].leeway }).min(), wake <= nanoseconds else {
                return count
            }
            count += 1
            for index in timers.indices where deadlines[index] <= wake {
                deadlines[index] += timers[index].interval * ((wake - deadlines[index]) / timers[index].interval + 1)
            }
        }
    }

    /// Wake-ups per second at the floor: timer windows, fd events and the device's writes.
    package static func perSecond(_ timers: [Timer], fdEventsPerSecond: Double, deviceWritesPerSecond: Double) -> Double {
        let seconds: UInt64 = 60
        return Double(windows(timers, nanoseconds: seconds * 1_000_000_000)) / Double(seconds)
            + fdEventsPerSecond + deviceWritesPerSecond
    }

    /// The second mix's six timers (`sensor-mix`), 100, 25, 20, 5, 2 and 1 Hz, a tenth of
    /// the interval as leeway; `appends`: its handler appends to the log.
    package static let mixTimers: [(timer: Timer, appends: Bool)] = [100, 25, 20, 5, 2, 1].enumerated().map {
        let interval = UInt64(1_000_000_000 / $0.element)
        return (Timer(interval: interval, leeway: interval / 10, phase: interval), $0.offset == 3 || $0.offset == 5)
    }

    /// The second mix's floor: its six timers' windows, a pipe fed every 50 ms.
    package static var sensorMix: Double {
        perSecond(mixTimers.map(\.timer), fdEventsPerSecond: 20, deviceWritesPerSecond: 20)
    }

    /// The sensor logger's timers (`sensor`): 50, 10 and 1 Hz with a tenth of their
    /// interval as leeway, started together.
    package static let sensorTimers: [Timer] = [50, 10, 1].map { hertz in
        let interval = UInt64(1_000_000_000 / hertz)
        return Timer(interval: interval, leeway: interval / 10, phase: interval)
    }

    /// The sensor logger's floor: its three timers' windows, a pipe fed every 100 ms.
    package static var sensor: Double {
        perSecond(sensorTimers, fdEventsPerSecond: 10, deviceWritesPerSecond: 10)
    }
}
