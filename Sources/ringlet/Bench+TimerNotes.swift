// The notes under the table for the timer rows of `ringlet bench`: what each side's
// child measured besides the headline. Imports neither Dispatch nor Ringlet.
import BenchSupport

extension Bench {
    /// The detail notes of one timer row (both sides succeeded).
    func timerNotes(_ row: BenchRow, dispatch: BenchChildResult, ringlet: BenchChildResult,
                    scale: BenchScale) -> [String] {
        let seconds = "\(scale.timersNanoseconds / 1_000_000_000)"
        func int(_ result: BenchChildResult, _ key: String) -> Int { Int(result[key] ?? 0) }
        func us(_ value: Double?) -> String { value.map { benchFigure($0 / 1000) + " µs" } ?? "?" }
        func ms(_ value: Double?) -> String { value.map { benchFigure($0 / 1e6) + " ms" } ?? "?" }
        func fires(_ result: BenchChildResult, slack: String) -> String {
            "\(int(result, "runs")) handler runs for \(int(result, "fires")) fires "
                + "(\(int(result, "coalesced")) coalesced into a later run), \(int(result, "early")) early, "
                + "\(int(result, "late")) later than \(slack); lateness p50 \(us(result["p50_ns"])), "
                + "p99 \(us(result["p99_ns"])), max \(us(result["max_ns"]))"
        }
        switch row {
        case .timers:
            func side(_ result: BenchChildResult) -> String {
                let threads = int(result, "threads_watched") + int(result, "threads_created")
                var text = "\(int(result, "switches")) (\(int(result, "voluntary")) voluntary, "
                    + "\(int(result, "nonvoluntary")) involuntary; \(int(result, "threads_woken")) of \(threads) "
                    + "threads woke, the busiest \(int(result, "busiest_thread_switches")) times"
                let created = int(result, "threads_created")
                if created > 0 { text += "; \(created) created meanwhile" }
                if int(result, "threads_exited") > 0 { text += "; \(int(result, "threads_exited")) exited (1 each)" }
                return text + ")"
            }
            return ["timers: \(scale.timers) repeating timers on one serial queue, every "
                + "\(scale.timerIntervalNanoseconds / 1_000_000) ms with leeway "
                + "\(scale.timerLeewayNanoseconds / 1_000_000) ms, first deadlines spread evenly over one interval, "
                + "handlers that only log their lateness; context switches of every thread but main (which sleeps "
                + "and reads /proc/self/task/*/status) over \(seconds) s: Dispatch " + side(dispatch)
                + ", Ringlet " + side(ringlet) + "; handler runs outside [deadline, deadline + leeway + 1 ms] "
                + "(row timers-window): Dispatch \(int(dispatch, "outside_window")), "
                + "Ringlet \(int(ringlet, "outside_window"))"]
        case .timersWindow:
            let slack = "leeway + 1 ms (\(scale.timerLeewayNanoseconds / 1_000_000 + 1) ms)"
            return ["timers-window: each handler run is judged against the newest deadline it covers, "
                + "first + k × interval with k counted from `data`; the same runs as the timers row: Dispatch "
                + fires(dispatch, slack: slack) + "; Ringlet " + fires(ringlet, slack: slack)]
        case .timersCPU:
            func side(_ result: BenchChildResult) -> String {
                "\(ms(result["cpu_ns"])) (user \(ms(result["cpu_user_ns"])), sys \(ms(result["cpu_sys_ns"])))"
            }
            return ["timers-cpu: getrusage(RUSAGE_SELF) over the same \(seconds) s as the timers row, every thread: "
                + "Dispatch " + side(dispatch) + ", Ringlet " + side(ringlet)]
        case .energy:
            func side(_ result: BenchChildResult) -> String {
                let joules = (result["energy_uj"] ?? 0) / 1e6
                let window = (result["window_ns"] ?? 1) / 1e9
                return benchFigure(joules) + " J (" + benchFigure(joules / window) + " W)"
            }
            return ["energy: \(int(ringlet, "rapl_packages")) RAPL package(s) over the same \(seconds) s as the timers "
                + "row: Dispatch " + side(dispatch) + ", Ringlet " + side(ringlet) + "; whole packages, so idle "
                + "power and other processes count too (target: Ringlet no more than Dispatch)"]
        case .strictLateness:
            return ["strict-lateness: \(scale.strictFires) fires of one .strict timer every "
                + "\(scale.strictIntervalNanoseconds / 1_000_000) ms, leeway 0, on a serial queue: Dispatch "
                + fires(dispatch, slack: "1 ms") + "; Ringlet " + fires(ringlet, slack: "1 ms")
                + "; Ringlet handed \(int(ringlet, "strict_staged")) fires to a worker ahead of the deadline, "
                + "\(int(ringlet, "strict_reached_late")) of them reached it only after the deadline"]
        default:
            return []
        }
    }
}

extension Bench {
    /// Throughput and thread figures behind the I/O rows.
    func ioNotes(_ row: BenchRow, dispatch: BenchChildResult, ringlet: BenchChildResult,
                 scale: BenchScale) -> [String] {
        func rate(_ bytes: Int, _ nanoseconds: Double?) -> String {
            guard let nanoseconds, nanoseconds > 0 else { return "?" }
            return benchFigure(Double(bytes) / 1_048_576 / (nanoseconds / 1e9)) + " MiB/s"
        }
        switch row {
        case .ioSequential:
            return ["io-seq-read: Dispatch \(rate(scale.ioFileBytes, dispatch["seq_ns"])), Ringlet "
                + "\(rate(scale.ioFileBytes, ringlet["seq_ns"])) (best of \(scale.ioRepetitions); a .stream channel, "
                + "one read to the end, handler on a serial queue)"]
        case .ioRandom:
            func perSecond(_ result: BenchChildResult) -> String {
                guard let ns = result["random_ns"], ns > 0 else { return "?" }
                return benchFigure(Double(scale.ioRandomReads) / (ns / 1e9) / 1000) + "k reads/s"
            }
            return ["io-random-read: Dispatch \(perSecond(dispatch)), Ringlet \(perSecond(ringlet)) "
                + "(a .random channel; each completion issues the next read)"]
        case .ioPipe:
            return ["io-pipe: Dispatch \(rate(scale.ioPipeBytes, dispatch["pipe_ns"])), Ringlet "
                + "\(rate(scale.ioPipeBytes, ringlet["pipe_ns"])) (a plain thread writes 64 KiB blocks; the channel "
                + "reads to EOF)"]
        case .ioThreads:
            func side(_ result: BenchChildResult) -> String {
                "\(Int(result["io_threads_before"] ?? 0)) before, peak \(Int(result["io_threads_peak"] ?? 0))"
            }
            return ["io-threads: threads of the process during the three I/O workloads (not counting the sampler and the pipe's writer thread): "
                + "Dispatch \(side(dispatch)); Ringlet \(side(ringlet))"]
        default:
            return []
        }
    }
}
