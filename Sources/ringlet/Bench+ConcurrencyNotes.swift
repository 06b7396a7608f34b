// The notes under the table for the Swift concurrency rows of `ringlet bench`, and what
// makes such a row a miss whatever its figures (a sleep that ended early, a main-actor
// hop off the main thread). Imports neither Dispatch nor Ringlet.
import BenchSupport

extension Bench {
    /// The detail notes of one concurrency row (both sides succeeded).
    func concurrencyNotes(_ row: BenchRow, dispatch: BenchChildResult, ringlet: BenchChildResult,
                          scale: BenchScale) -> [String] {
        func int(_ result: BenchChildResult, _ key: String) -> Int { Int(result[key] ?? 0) }
        func us(_ value: Double?) -> String { value.map { benchFigure($0 / 1000) + " µs" } ?? "?" }
        func ms(_ value: Double?) -> String { value.map { benchFigure($0 / 1e6) + " ms" } ?? "?" }
        func runs(_ result: BenchChildResult) -> String {
            (1...scale.concurrencyRepetitions).compactMap { result["run\($0)_ns"].map(benchFigure) }
                .joined(separator: ", ")
        }
        var notes: [String] = []
        if ringlet["concurrency_on_ringlet"] == 0 {
            notes.append("\(row.rawValue): Ringlet did NOT run Swift concurrency in its child (swiftConcurrency "
                + "off, or a toolchain without the executor hooks): both columns measure the toolchain's executor")
        }
        switch row {
        case .taskSpawn:
            notes.append("task-spawn: \(scale.tasksPerGroup) child tasks per withTaskGroup, the groups one after "
                + "another in one task; runs (ns per task): Dispatch \(runs(dispatch)); Ringlet \(runs(ringlet))")
        case .actorPingPong:
            notes.append("actor-ping-pong: one actor awaits a method of another \(benchCount(scale.actorRoundTrips)) "
                + "times (2 hops each); runs (ns per hop): Dispatch \(runs(dispatch)); Ringlet \(runs(ringlet)); an idle "
                + "actor is entered on the calling thread without any executor, so both sides measure the Swift "
                + "runtime's actor switch")
        case .taskSleep:
            func side(_ result: BenchChildResult) -> String {
                "\(int(result, "switches")) switches (\(int(result, "voluntary")) voluntary, "
                    + "\(int(result, "nonvoluntary")) involuntary, \(int(result, "threads_woken")) threads woke), "
                    + "CPU \(ms(result["cpu_ns"])) in \(ms(result["window_ns"])); sleeps lasted at least "
                    + "\(ms(result["shortest_ns"])), lateness p50 \(us(result["late_p50_ns"])), "
                    + "p99 \(us(result["late_p99_ns"])), max \(us(result["late_max_ns"])), "
                    + "\(int(result, "beyond_tolerance")) later than tolerance + 1 ms"
            }
            notes.append("task-sleep: \(int(ringlet, "sleeps")) sleeps in a task group, context switches of every "
                + "thread of the process (main included, /proc/self/task/*/status): Dispatch " + side(dispatch)
                + "; Ringlet " + side(ringlet))
        case .taskThreads:
            notes.append("task-threads: \(scale.blockingTasks) tasks in a task group each block in nanosleep "
                + "\(scale.blockingNanoseconds / 1_000_000) ms: the toolchain's executor peaks at "
                + "\(int(dispatch, "peak")) threads (wall \(ms(dispatch["wall_ns"]))), Ringlet at "
                + "\(int(ringlet, "peak")) (wall \(ms(ringlet["wall_ns"])))")
        case .asyncMainTaskSpawn, .asyncMainActorPingPong, .asyncMainTaskThreads:
            var text = "\(row.rawValue): a program whose main is async and that only imports Ringlet "
                + "(Sources/RingletAsyncMainBench), the same binary on both sides: RINGLET_SWIFT_CONCURRENCY=toolchain "
                + "for Dispatch's, Ringlet's executors installed at load for Ringlet's"
            if row == .asyncMainTaskThreads {
                text += "; \(scale.blockingTasks) tasks block \(scale.blockingNanoseconds / 1_000_000) ms each: the "
                    + "toolchain's executor peaks at \(int(dispatch, "peak")) threads (wall \(ms(dispatch["wall_ns"]))), "
                    + "Ringlet at \(int(ringlet, "peak")) (wall \(ms(ringlet["wall_ns"])))"
            } else {
                text += "; runs (ns per unit): Dispatch \(runs(dispatch)); Ringlet \(runs(ringlet))"
            }
            notes.append(text)
        case .mainActorP50, .mainActorP99:
            if row == .mainActorP99 {
                notes.append("main-actor: \(int(ringlet, "samples")) awaits of MainActor.run from a detached task, "
                    + "the main thread in dispatchMain(), time until the closure starts: Dispatch p50 "
                    + "\(us(dispatch["p50_ns"])), p99 \(us(dispatch["p99_ns"])), max \(us(dispatch["max_ns"])); "
                    + "Ringlet p50 \(us(ringlet["p50_ns"])), p99 \(us(ringlet["p99_ns"])), max "
                    + "\(us(ringlet["max_ns"])) (one run per side for both rows); the process's CPU time over "
                    + "the measured hops: Dispatch \(ms(dispatch["cpu_ns"])) in \(ms(dispatch["wall_ns"])), Ringlet "
                    + "\(ms(ringlet["cpu_ns"])) in \(ms(ringlet["wall_ns"])); Ringlet's main thread, run dry, "
                    + "watched for the next hop \(int(ringlet, "main_watches")) times before parking, and "
                    + "\(int(ringlet, "main_watches_caught")) of those watches caught it")
            }
        default:
            break
        }
        return notes
    }

    /// Wrong results of a concurrency row, and whether they make it a miss whatever its
    /// ratio: a sleep that ended before its duration, a main-actor hop that ran off the
    /// main thread. The toolchain's are reported; only Ringlet's make a miss.
    func concurrencyFailures(_ row: BenchRow, dispatch: BenchChildResult,
                             ringlet: BenchChildResult) -> (notes: [String], miss: Bool) {
        var notes: [String] = []
        var broken = false
        for (name, result) in [("Dispatch", dispatch), ("Ringlet", ringlet)] where result.failure == nil {
            if row == .taskSleep, let short = result["short_sleeps"], short > 0 {
                notes.append("task-sleep: \(name): \(Int(short)) of \(Int(result["sleeps"] ?? 0)) sleeps ENDED EARLY "
                    + "(shortest " + benchFigure((result["shortest_ns"] ?? 0) / 1e6) + " ms)")
                broken = broken || name == "Ringlet"
            }
            if row == .mainActorP99 || row == .mainActorP50, result["ran_on_main_thread"] == 0 {
                // Both rows read one run: said once, under the second.
                if row == .mainActorP99 {
                    notes.append("main-actor: \(name): the @MainActor closure ran OFF the main thread"
                        + (name == "Dispatch" ? " (on Linux, dispatchMain() ends the main thread and a pool thread "
                            + "serves the main queue)" : ""))
                }
                broken = broken || name == "Ringlet"
            }
        }
        return (notes, broken)
    }
}

extension Bench {
    /// What the floor side (the workload on one plain thread, no runtime) cost, and what
    /// the CPU target leaves Ringlet above it per wake-up.
    func floorNotes(_ row: BenchRow, floor: BenchChildResult, dispatch: BenchChildResult,
                    ringlet: BenchChildResult) -> [String] {
        if let failure = floor.failure { return ["\(row.rawValue): the floor side failed: \(failure)"] }
        let cpu = (floor: floor["cpu_ns"] ?? 0, dispatch: dispatch["cpu_ns"] ?? 0, ringlet: ringlet["cpu_ns"] ?? 0)
        guard cpu.dispatch > 0, let wakeups = ringlet["switches"], wakeups > 0 else {
            return ["\(row.rawValue): floor CPU " + benchFigure(cpu.floor / 1e6) + " ms (no Dispatch CPU or Ringlet "
                + "wake-ups to compare it with)"]
        }
        func perWakeup(_ ns: Double) -> String { benchFigure(ns / wakeups / 1000) + " µs" }
        let target = row.targetRatio ?? 1
        let left = target * cpu.dispatch - cpu.floor
        return ["\(row.rawValue): floor (the same timers, handlers, pipe and device with no runtime: one plain thread "
            + "sleeping in poll(2) until the next window, QoS set aside): CPU " + benchFigure(cpu.floor / 1e6)
            + " ms, \(Int(floor["switches"] ?? 0)) switches = " + benchFigure(cpu.floor / cpu.dispatch)
            + " of Dispatch's CPU (Ringlet " + benchFigure(cpu.ringlet / cpu.dispatch) + "). The target "
            + benchFigure(target) + (left > 0 ? " leaves Ringlet " + perWakeup(left) + " per wake-up above the floor"
                : " is below the floor itself in this run") + "; Ringlet spends " + perWakeup(cpu.ringlet - cpu.floor)
            + " per wake-up above it"]
    }

    /// The detail notes of the sensor rows (both sides succeeded): what the workload did
    /// on each side, its RAPL energy where readable, and the model behind the estimate.
    func sensorNotes(_ row: BenchRow, dispatch: BenchChildResult, ringlet: BenchChildResult,
                     scale: BenchScale) -> [String] {
        func int(_ result: BenchChildResult, _ key: String) -> Int { Int(result[key] ?? 0) }
        func side(_ name: String, _ result: BenchChildResult) -> String {
            var text = "\(name) \(int(result, "switches")) switches (\(int(result, "nonvoluntary")) involuntary, "
                + "\(int(result, "threads_woken")) threads woke), "
                + "CPU " + benchFigure((result["cpu_ns"] ?? 0) / 1e6) + " ms; \(int(result, "samples")) samples, "
                + "\(int(result, "log_writes")) log records, \(int(result, "summary_writes")) summaries, "
                + "\(int(result, "device_reads")) reads of \(int(result, "device_writes")) device writes"
            if let wakes = result["manager_wait_wakes"] {
                text += "; \(Int(wakes)) workers woken from the manager's wait (the whole run)"
            }
            if result["energy_available"] == 1 {
                text += "; RAPL " + benchFigure((result["energy_uj"] ?? 0) / 1000) + " mJ"
            }
            return text
        }
        switch row {
        case .sensorCPU:
            return ["sensor: timers at 50 Hz user-initiated, 10 Hz utility (a 64-byte log record each) and 1 Hz "
                + "background (a 1 KiB summary file), leeway a tenth of the interval, and a read source on a pipe "
                + "a device thread feeds every 100 ms, measured over "
                + "\(scale.sensorNanoseconds / 1_000_000_000) s (every thread but main, the device thread's "
                + "wake-ups included on both sides): " + side("Dispatch", dispatch) + "; " + side("Ringlet", ringlet)]
        case .sensorWakeups:
            let floor = BenchWakeupFloor.sensor
            let seconds = Double(scale.sensorNanoseconds) / 1e9
            let ringletRate = (ringlet["switches"] ?? 0) / seconds
            return ["sensor-wakeups: floor " + benchFigure(floor) + " wake-ups per second (one per distinct timer "
                + "window, the three timers' overlapping windows merged, one per pipe event, and the device "
                + "thread's 10 writes): Ringlet " + benchFigure(ringletRate / floor) + "× the floor, Dispatch "
                + benchFigure((dispatch["switches"] ?? 0) / seconds / floor) + "×"]
        case .sensorMixCPU:
            func mix(_ name: String, _ result: BenchChildResult) -> String {
                "\(name) \(int(result, "switches")) switches, CPU " + benchFigure((result["cpu_ns"] ?? 0) / 1e6)
                    + " ms, \(int(result, "samples")) timer fires, \(int(result, "device_reads")) reads of "
                    + "\(int(result, "device_writes")) device writes"
            }
            return ["sensor-mix: six repeating timers — 100 Hz user-initiated, 25 Hz default, 20 Hz utility and 2 Hz "
                + "background sampling, 5 Hz utility and 1 Hz background appending 64 bytes to a log — leeway a "
                + "tenth of each interval, and a read source (utility) on a pipe fed every 50 ms, measured over "
                + "\(scale.sensorNanoseconds / 1_000_000_000) s: " + mix("Dispatch", dispatch) + "; "
                + mix("Ringlet", ringlet)]
        case .sensorMixWakeups:
            let floor = BenchWakeupFloor.sensorMix
            let seconds = Double(scale.sensorNanoseconds) / 1e9
            return ["sensor-mix-wakeups: floor " + benchFigure(floor) + " wake-ups per second (the six timers' "
                + "distinct windows, 20 pipe events and the device's 20 writes): Ringlet "
                + benchFigure((ringlet["switches"] ?? 0) / seconds / floor) + "× the floor, Dispatch "
                + benchFigure((dispatch["switches"] ?? 0) / seconds / floor) + "×"]
        case .sensorEnergy:
            return ["sensor-energy-estimate: a model, not a measurement: E = CPU seconds × "
                + benchFigure(BenchEnergyModel.activeWatts) + " W + wake-ups × "
                + benchFigure(BenchEnergyModel.wakeJoules * 1e6) + " µJ (the Measuring article, \"The energy "
                + "estimate\")"]
        default:
            return []
        }
    }
}
