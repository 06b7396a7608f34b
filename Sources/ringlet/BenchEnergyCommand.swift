// `ringlet bench-energy` (issue 35): the logger a board runs for minutes, measured on four
// sides in turn — Ringlet, the toolchain's Dispatch with the same leeway, a thread per
// sensor sleeping with clock_nanosleep (what a C programmer writes), and Ringlet with
// leeway 0 (what coalescing itself is worth) — each in a child process of this binary.
// Per side: wake-ups per second, CPU time, timer lateness against the leeway bound, the
// CPUs' idle-state residency and RAPL energy per sample where the machine exposes them,
// and the model estimate, labelled as one. Imports neither Dispatch nor Ringlet.
import ArgumentParser
import BenchSupport
import Glibc
import Synchronization

struct BenchEnergyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-energy",
        abstract: "Run the sensor logger for a set time on four sides and compare what each costs.",
        discussion: """
            The logger: 8 sensors (2 at 100 Hz, 3 at 10 Hz, 3 at 1 Hz) with a leeway of a tenth of their \
            interval, and a batch write with fsync every 30 s. Sides, one after another: \
            \(BenchEnergyLogger.Side.allCases.map(\.title).joined(separator: "; ")). Figures the machine \
            does not expose (idle states, RAPL) are reported as "not available here".
            """)

    @Option(help: "How long each side runs, in seconds (at least 1).")
    var seconds: Int = 60

    @Option(help: "Also draw the four sides into this SVG file: wake-ups, CPU time and p99 lateness.")
    var chart: String?

    @Option(help: .hidden)
    var child: String?

    func validate() throws {
        if seconds < 1 { throw ValidationError("--seconds must be at least 1 (got \(seconds))") }
        if let child, BenchEnergyLogger.Side(rawValue: child) == nil {
            throw ValidationError("unknown side '\(child)': one of "
                + BenchEnergyLogger.Side.allCases.map(\.rawValue).joined(separator: ", "))
        }
    }

    func run() throws {
        let nanoseconds = UInt64(seconds) * 1_000_000_000
        if let child, let side = BenchEnergyLogger.Side(rawValue: child) {
            for (key, value) in Self.measure(side, nanoseconds: nanoseconds) { print("\(key) \(value)") }
            return
        }
        let machine = BenchMachine.current()
        print("# ringlet bench-energy\n")
        print("- machine: \(machine.cpus) online CPUs, \(machine.cpuModel), Linux \(machine.kernel)")
        print("- the logger: 8 sensors (2 × 100 Hz user-initiated, 3 × 10 Hz utility, 3 × 1 Hz background), "
            + "a batch write and fsync every 30 s; each side runs \(seconds) s in a child process, one after another\n")
        var results: [(BenchEnergyLogger.Side, BenchChildResult)] = []
        let executable = benchExecutablePath()
        for (index, side) in BenchEnergyLogger.Side.allCases.enumerated() {
            let ticker = BenchEnergyTicker(side: side, index: index, seconds: seconds)
            ticker.start()
            let result = benchRunChild(executable, ["bench-energy", "--child", side.rawValue, "--seconds", "\(seconds)"],
                                       side: side == .dispatch ? .dispatch : .ringlet, timeoutSeconds: seconds + 60)
            ticker.stop()
            results.append((side, result))
        }
        for line in BenchEnergyReport(seconds: Double(seconds), results: results).lines() { print(line) }
        if let chart {
            let sides = results.map { side, result in
                BenchEnergyChart.Side(title: side.title, figures: result.failure != nil ? nil : (
                    (result["switches"] ?? 0) / Double(seconds), (result["cpu_ns"] ?? 0) / 1e6,
                    (result["late_p99_ns"] ?? 0) / 1e6))
            }
            let drawn = BenchEnergyChart(sides: sides, seconds: Double(seconds))
            if !drawn.write(to: chart) { throw ValidationError("could not write the chart to \(chart)") }
            print("\nchart: \(chart)")
        }
    }

    /// One side's run, in its child process.
    static func measure(_ side: BenchEnergyLogger.Side, nanoseconds: UInt64) -> [(String, Double)] {
        let idle = BenchIdleResidency()
        let idleBefore = idle.read()
        let start = benchNow()
        var out: [(String, Double)]
        switch side {
        case .ringlet:
            _ = RingletSide.start()
            out = RingletSide.energyLogger(nanoseconds: nanoseconds, leewayPercent: 10)
        case .ringletNoLeeway:
            _ = RingletSide.start()
            out = RingletSide.energyLogger(nanoseconds: nanoseconds, leewayPercent: 0)
        case .dispatch:
            out = DispatchSide.energyLogger(nanoseconds: nanoseconds, leewayPercent: 10)
        case .threads:
            out = threads(nanoseconds: nanoseconds)
        }
        let window = Double(benchNow() - start) / 1000
        if let idleBefore, let idleAfter = idle.read() {
            let cpus = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            out.append(("idle_share", idle.idleShare(idleBefore, idleAfter, windowMicroseconds: window, cpus: cpus)))
        }
        return out
    }

    /// The C programmer's side: its threads, measured as the runtimes' sides are.
    private static func threads(nanoseconds: UInt64) -> [(String, Double)] {
        let path = "/tmp/ringlet-bench-energy-\(getpid()).log"
        let log = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(log); unlink(path) }
        let lateness = BenchLateness(sensors: BenchEnergyLogger.hertz.count)
        // The threads run past the measured window on both ends, so that all of them are
        // there when it begins and ends (a thread gone by then would take its count along).
        let runner = benchStartThread {
            benchEnergyThreads(nanoseconds: nanoseconds + 400_000_000, lateness: lateness) {
                benchWriteBatch(log, bytes: 8 * 1024)
            }
        }
        benchSleep(nanoseconds: 100_000_000)
        let measured = benchMeasureWhileSleeping(nanoseconds: nanoseconds)
        pthread_join(runner, nil)
        return measured + lateness.summary(bound: BenchEnergyLogger.latenessBound)
    }
}

/// The progress line while a side runs: on a terminal rewritten every second, otherwise
/// a plain line every 10 s, on stderr.
final class BenchEnergyTicker: @unchecked Sendable {
    private let label: String
    private let seconds: Int
    private let stopped = Atomic<Bool>(false)
    private var thread = pthread_t()

    init(side: BenchEnergyLogger.Side, index: Int, seconds: Int) {
        label = "bench-energy: [\(index + 1)/\(BenchEnergyLogger.Side.allCases.count)] \(side.title)"
        self.seconds = seconds
    }

    func start() {
        let terminal = isatty(2) == 1
        thread = benchStartThread { [self] in
            var elapsed = 0
            while !stopped.load(ordering: .relaxed) {
                if terminal || elapsed % 10 == 0 {
                    let line = "\(label): \(elapsed) of \(seconds) s"
                    fputs(terminal ? "\r\u{1B}[K" + line : line + "\n", stderr)
                    fflush(stderr)
                }
                for _ in 0..<10 where !stopped.load(ordering: .relaxed) { benchSleep(nanoseconds: 100_000_000) }
                elapsed += 1
            }
            if terminal { fputs("\r\u{1B}[K", stderr) }
        }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
    }
}
