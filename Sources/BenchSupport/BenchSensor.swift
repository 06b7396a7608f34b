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
