// The table `ringlet bench-energy` prints, and its chart: one row per side, each figure
// saying where it came from or that the machine does not expose it. Imports neither
// Dispatch nor Ringlet.
import BenchSupport
import Glibc

struct BenchEnergyReport {
    let seconds: Double
    let results: [(BenchEnergyLogger.Side, BenchChildResult)]

    func lines() -> [String] {
        var lines = ["| side | wake-ups/s | CPU, ms | fires | lateness p50 / p99, ms | beyond 10 % + 1 ms | "
            + "idle-state residency | RAPL, mJ per fire | estimate (model), mJ per fire |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        var notes: [String] = []
        for (side, result) in results {
            if let failure = result.failure {
                lines.append("| \(side.title) | failed: \(failure) | | | | | | | |")
                notes += result.diagnostics.prefix(5).map { "- \(side.rawValue) wrote: \($0)" }
                continue
            }
            let fires = max(result["fires"] ?? 0, 1)
            let switches = result["switches"] ?? 0
            let cpu = result["cpu_ns"] ?? 0
            let idle = result["idle_share"].map { benchFigure($0 * 100) + " %" } ?? "not available here"
            let rapl = result["energy_available"] == 1
                ? benchFigure((result["energy_uj"] ?? 0) / 1000 / fires) : "not available here"
            let estimate = BenchEnergyModel.microjoules(cpuNanoseconds: cpu, wakeups: switches) / 1000 / fires
            let lateness: String = benchFigure((result["late_p50_ns"] ?? 0) / 1e6) + " / "
                + benchFigure((result["late_p99_ns"] ?? 0) / 1e6)
            let early = Int(result["early"] ?? 0)
            let beyond: String = "\(Int(result["late_beyond_bound"] ?? 0))" + (early > 0 ? " (\(early) early)" : "")
            let cells: [String] = [side.title, benchFigure(switches / seconds), benchFigure(cpu / 1e6), "\(Int(fires))",
                                   lateness, beyond, idle, rapl, benchFigure(estimate)]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append("- wake-ups: context switches of every thread but main (which sleeps), per second; CPU: the "
            + "process's user + system time (getrusage) over the run")
        lines.append("- idle-state residency: the share of the run × CPUs spent in idle states other than POLL, "
            + "from /sys/devices/system/cpu/cpu*/cpuidle/state*/time, system-wide (other processes count); "
            + "not available where the kernel has no cpuidle driver (most virtual machines)")
        lines.append("- RAPL: the packages' energy_uj under /sys/class/powercap, system-wide, readable by root since "
            + "Linux 5.10; perf's power events read the same counters and are not read separately")
        lines.append("- estimate: a model, not a measurement: E = CPU seconds × "
            + benchFigure(BenchEnergyModel.activeWatts) + " W + wake-ups × "
            + benchFigure(BenchEnergyModel.wakeJoules * 1e6) + " µJ (the Measuring article, \"The energy estimate\")")
        lines.append("- Ringlet, leeway 0: Ringlet still widens utility and background timers' leeway to 5 % and 10 % "
            + "of their interval (its QoS policy), so only the 100 Hz sensors lose their leeway")
        return lines + notes
    }
}
