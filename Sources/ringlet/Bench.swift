// `ringlet bench`: compares Ringlet with the toolchain's Dispatch in one run and prints
// a markdown table (figures, ratio Ringlet/Dispatch, target, PASS/MISS).
//
// Each side of each row runs in its own child process of this binary
// (`ringlet bench --child ROW --side dispatch|ringlet`), so that one runtime's
// threads, allocations and leftover work never pollute the other's figures (thread
// counts and RSS are per process), and so that a hang or crash of one side is
// reported instead of stopping the run. This file imports neither Dispatch nor
// Ringlet: the workloads are written once, in Sources/BenchWorkloads, and compiled
// into one module per side (see Workloads.swift there).
import ArgumentParser
import BenchSupport
import BenchWorkloadsDispatch
import BenchWorkloadsRinglet
import Glibc

/// The two sides: the same workloads, one module each (both name their type `Workloads`).
typealias DispatchSide = BenchWorkloadsDispatch.Workloads
typealias RingletSide = BenchWorkloadsRinglet.Workloads

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare Ringlet with the toolchain's Dispatch.",
        discussion: """
            Prints a markdown table: the Dispatch and Ringlet figures, the ratio Ringlet/Dispatch \
            (lower is better), the target and PASS/MISS (or "not available here", counted as neither), then \
            `bench: N rows, N pass, N miss`. \
            Exits 0 even when targets are missed. Rows: \
            \(BenchRow.allCases.map(\.rawValue).joined(separator: ", ")).
            """)

    @Flag(help: "Smaller workloads, one timed run each: a smoke run, not a measurement.")
    var quick = false

    @Option(help: "Comma-separated rows to run (default: all).")
    var only: String?

    /// Child mode: measure one side of one row and print `key value` lines.
    @Option(help: .hidden)
    var child: String?

    @Option(help: .hidden)
    var side: String?

    /// Child mode: `serial-queues` puts each blocking item of the threads row on its own serial queue.
    @Option(help: .hidden)
    var variant: String?

    @Flag(name: .customLong("scale"),
          help: "Instead of the table: sweep each workload over growing loads (timers, read sources, queues, producers) and report the cost per unit at each, for both runtimes.")
    var scaleSweep = false

    @Option(help: "Also draw the results into this SVG file: a pair of bars per row (Dispatch and Ringlet as ratios to Dispatch, the target marked); with --scale, the curves.")
    var chart: String?

    @Flag(help: "Show which row runs, n of m, and the time elapsed on stderr even when it is not a terminal (plain lines; on a terminal it is shown anyway, in place).")
    var progress = false

    @Option(help: "The kernel backend Ringlet's side runs on: io_uring or epoll (default: what the runtime chooses; sets RINGLET_BACKEND for every child).")
    var backend: String?

    /// Child mode of --scale: measure one side of one sweep at `--load`.
    @Option(help: .hidden)
    var sweepChild: String?

    @Option(help: .hidden)
    var load: Int?

    func validate() throws {
        if let sweepChild {
            guard BenchSweep(rawValue: sweepChild) != nil, load != nil, side.flatMap(BenchSide.init(rawValue:)) != nil else {
                throw ValidationError("--sweep-child needs a sweep (\(BenchSweep.allCases.map(\.rawValue).joined(separator: ", "))), "
                    + "--load N and --side dispatch|ringlet")
            }
        }
        if let backend, backend != "io_uring" && backend != "epoll" {
            throw ValidationError("--backend must be io_uring or epoll (got '\(backend)')")
        }
        if let child, BenchRow(rawValue: child) == nil { throw ValidationError("unknown row '\(child)'") }
        if child != nil, side.flatMap(BenchSide.init(rawValue:)) == nil {
            throw ValidationError("--child needs --side dispatch|ringlet|floor")
        }
        if let child, side == BenchSide.floor.rawValue, child != BenchRow.sensorCPU.workload.rawValue,
           child != BenchRow.sensorMixCPU.workload.rawValue {
            throw ValidationError("--side floor runs only the sensor rows' workloads (\(BenchRow.sensorCPU.workload.rawValue), "
                + "\(BenchRow.sensorMixCPU.workload.rawValue)), not \(child)")
        }
        if let sweepChild, side == BenchSide.floor.rawValue {
            throw ValidationError("--side floor has no --scale sweep (\(sweepChild)): use dispatch or ringlet")
        }
        _ = try selectedRows()
    }

    private func selectedRows() throws -> [BenchRow] {
        guard let only else { return BenchRow.allCases }
        return try only.split(separator: ",").map { name in
            guard let row = BenchRow(rawValue: name.trimmingSpaces()) else {
                throw ValidationError("unknown row '\(name)'; rows: "
                    + BenchRow.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return row
        }
    }

    /// Child mode: overrides the item count of the serial-async rows, and the tasks,
    /// actor round trips and main-actor hops of the concurrency rows (instruction counts
    /// under callgrind: run two counts and divide the difference by the items between;
    /// or a shorter run).
    @Option(help: .hidden)
    var items: Int?

    var scale: BenchScale {
        var scale: BenchScale = quick ? .quick : .full
        if let items {
            scale.serialItems = items
            scale.spawnTasks = items
            scale.tasksPerGroup = min(scale.tasksPerGroup, max(items, 1))
            scale.actorRoundTrips = items
            scale.mainActorHops = items
        }
        return scale
    }

    func run() throws {
        // The children inherit it, and so does this process's runtime (the table's head).
        if let backend { setenv("RINGLET_BACKEND", backend, 1) }
        if let sweepChild, let sweep = BenchSweep(rawValue: sweepChild), let load,
           let side = side.flatMap(BenchSide.init(rawValue:)) {
            var out: [(String, Double)] = []
            if side == .ringlet { out += RingletSide.start() }
            switch side {
            case .dispatch: out += DispatchSide.sweep(sweep, load: load, quick: quick)
            case .ringlet: out += RingletSide.sweep(sweep, load: load, quick: quick)
            case .floor: break  // refused by validate()
            }
            benchEmit(out + [("threads_after", Double(benchThreadCount()))])
            return
        }
        if scaleSweep {
            BenchSweepRunner(quick: quick).run(chart: chart)
            return
        }
        if let child, let row = BenchRow(rawValue: child), let side = side.flatMap(BenchSide.init(rawValue:)) {
            runChild(row, side)
            return
        }
        try runParent(selectedRows())
    }

    // MARK: Child: one side of one row

    private func runChild(_ row: BenchRow, _ side: BenchSide) {
        var out: [(String, Double)] = []
        let threadsBefore = benchThreadCount()
        // Before either runtime is used: what a program measuring itself from its start sees.
        let rssAtStart = Double(benchResidentBytes())
        let anonAtStart = Double(benchStatusBytes("RssAnon:"))
        var sampler: BenchThreadSampler?
        if row == .threads || row == .taskThreads {
            // Sample from before the runtime starts: a transient thread counts too.
            sampler = BenchThreadSampler()
            sampler?.start()
        }
        if side == .ringlet { out += RingletSide.start() }
        switch side {
        case .dispatch: out += DispatchSide.run(row, scale, variant: variant)
        case .ringlet: out += RingletSide.run(row, scale, variant: variant)
        case .floor:
            switch row.workload == .sensorCPU ? BenchSensorFloor.sensor(scale) : BenchSensorFloor.sensorMix(scale) {
            case .success(let figures): out += figures
            case .failure(let error):
                fputs("ringlet bench: \(row.rawValue): \(error)\n", stderr)
                Glibc.exit(3)
            }
        }
        if let sampler {
            sampler.sample()
            let (peak, samples) = sampler.stop()
            out += [("peak", Double(peak)), ("threads_before", Double(threadsBefore)),
                    ("samples", Double(samples))]
        }
        out.append(("threads_after", Double(benchThreadCount())))
        let figures = Dictionary(out, uniquingKeysWith: { first, _ in first })
        if let rss = figures["rss_after_bytes"], let anon = figures["anon_after_bytes"] {
            out += [("rss_from_process_start_bytes", rss - rssAtStart),
                    ("anon_from_process_start_bytes", anon - anonAtStart)]
        }
        benchEmit(out)
    }

    // MARK: Parent: the table

    private func runParent(_ rows: [BenchRow]) {
        let machine = BenchMachine.current()
        // Start Ringlet explicitly, as an application would; its shape heads the table.
        let shape = Dictionary(RingletSide.start(), uniquingKeysWith: { a, _ in a })
        let workers = Int(shape["workers"] ?? 0)
        let reserve = Int(shape["reserve"] ?? 0)
        let scale = self.scale

        print("# ringlet bench\(quick ? " (--quick: smoke sizes, not a measurement)" : "")")
        print("")
        print("- machine: \(machine.cpus) online CPUs, \(machine.cpuModel), Linux \(machine.kernel)")
        print("- Ringlet: derived configuration, \(workers) workers + \(reserve) reserve "
            + "(\(Int(shape["low_qos_workers"] ?? 0)) may run utility/background), "
            + "\(Int(shape["work_nodes"] ?? 0)) work nodes")
        if let backend { print("- Ringlet's backend: \(backend) (--backend, RINGLET_BACKEND for every child)") }
        print("- Dispatch: the toolchain's swift-corelibs-libdispatch")
        print("- method: each side of each row runs in fresh child processes of this binary, the sides "
            + "alternating; timed rows report the best of \(scale.repetitions) run\(scale.repetitions == 1 ? "" : "s") "
            + "after a warm-up\(quick ? "" : " (best of 2 rounds; latency and strict-lateness: best p99 of 3 rounds)"); "
            + "ratio = Ringlet/Dispatch, lower is better")
        print("")

        var progress = BenchProgress(requested: self.progress, total: rows.count)
        var chartRows: [BenchRatioChart.Row] = []
        let table = BenchTable(titleWidth: rows.map { $0.title(scale).count }.max() ?? 9,
                               resultWidth: rows.contains(.energy) ? BenchVerdict.unavailable.rawValue.count : 6)
        table.printHeader()
        let executable = benchExecutablePath()
        var details: [String] = []
        var passes = 0
        var misses = 0
        var unavailable = 0
        // Runs of a workload several rows read (the timers rows), by "workload side".
        var sharedRuns: [String: BenchChildResult] = [:]
        for (index, row) in rows.enumerated() {
            func measure(_ side: BenchSide, variant: String? = nil) -> BenchChildResult {
                let shared = variant == nil && BenchRow.allCases.contains { $0 != row && $0.workload == row.workload }
                let key = row.workload.rawValue + " " + side.rawValue
                if shared, let run = sharedRuns[key] { return run }
                progress.update(index, row.rawValue, side.name + (variant.map { " (\($0))" } ?? "") + " side")
                var arguments = ["bench", "--child", row.workload.rawValue, "--side", side.rawValue]
                if let variant { arguments += ["--variant", variant] }
                if quick { arguments.append("--quick") }
                var program = executable
                if let child = row.childProgram {
                    // A program of its own beside this one; the side is its environment.
                    program = String(executable[..<(executable.lastIndex(of: "/") ?? executable.startIndex)]) + "/" + child
                    arguments = [row.workload.rawValue] + (quick ? ["--quick"] : [])
                }
                // The traced row's Ringlet child writes its trace at exit to a file of
                // this process's, removed once read (the parent's own runtime started
                // long before: setting the variable here does not trace it).
                let trace = row == .serialAsyncTraced && side == .ringlet ? "/tmp/ringlet-bench-\(getpid()).trace.json" : nil
                if let trace { setenv("RINGLET_TRACE", trace, 1) }
                var run = benchRunChild(program, arguments, side: side, timeoutSeconds: row.timeoutSeconds(scale))
                if let trace {
                    unsetenv("RINGLET_TRACE")
                    if access(trace, F_OK) != 0 && run.failure == nil { run.failure = "no trace file was written" }
                    unlink(trace)
                }
                if shared { sharedRuns[key] = run }
                return run
            }
            // Rounds alternate the sides so that a burst of load from elsewhere on a
            // shared machine hits both; each side keeps its best round. A side that
            // failed is not measured again.
            var best: [BenchSide: BenchChildResult] = [:]
            var headlines: [BenchSide: [Double]] = [:]
            for _ in 0..<row.rounds(scale) {
                for side in [BenchSide.dispatch, .ringlet] where best[side]?.failure == nil {
                    let result = measure(side)
                    let headline = result.failure == nil ? result[row.headlineKey] : nil
                    if let headline { headlines[side, default: []].append(headline) }
                    if best[side] != nil, let failure = result.failure {
                        details.append("\(row.rawValue): a later round of the \(side.name) "
                            + "side failed (\(failure)); the table shows a round that succeeded")
                        details += benchStderrNotes(row.rawValue, side.name, result)
                    }
                    if let kept = best[side], result.failure != nil
                        || (kept[row.headlineKey] ?? .infinity) <= (headline ?? .infinity) { continue }
                    best[side] = result
                }
            }
            let dispatch = best[.dispatch]!
            let ringlet = best[.ringlet]!
            if row.rounds(scale) > 1 {
                func list(_ side: BenchSide) -> String {
                    (headlines[side] ?? []).map { row.display($0) }.joined(separator: ", ")
                }
                details.append("\(row.rawValue): best of \(row.rounds(scale)) rounds in fresh processes, "
                    + "Dispatch \(list(.dispatch)); Ringlet \(list(.ringlet))")
            }
            let (line, notes) = judge(row, dispatch: dispatch, ringlet: ringlet, workers: workers, reserve: reserve)
            progress.clear()
            table.printLine(line)
            chartRows.append(BenchRatioChart.Row(title: line.title, ratio: line.ratioValue,
                                                 target: line.targetValue, verdict: line.verdict.rawValue))
            switch line.verdict {
            case .pass: passes += 1
            case .miss: misses += 1
            case .unavailable: unavailable += 1
            }
            details += notes
            if row == .sensorCPU || row == .sensorMixCPU {
                let floor = measure(.floor)
                details += floorNotes(row, floor: floor, dispatch: dispatch, ringlet: ringlet)
                    + benchStderrNotes(row.rawValue, BenchSide.floor.name, floor)
            }
            if row == .threads {
                // Not in the table: the same items each on its own serial queue, which
                // Dispatch serves from its overcommit pool (a thread per runnable queue).
                details += serialQueueVariant(measure(.dispatch, variant: "serial-queues"),
                                              measure(.ringlet, variant: "serial-queues"),
                                              limit: workers + reserve + 1 + Int(ringlet["threads_before"] ?? 1) + 1)
            }
        }
        progress.finish()
        print("")
        for note in details { print("- " + note) }
        if !details.isEmpty { print("") }
        if rows.contains(where: { $0.workload == .ioSequential }) { BenchIOFiles.remove(bytes: scale.ioFileBytes) }
        if let chart {
            let drawing = BenchRatioChart(title: "ringlet bench: Ringlet / Dispatch (\(machine.cpus) CPUs, "
                                            + "\(machine.cpuModel)\(quick ? ", --quick" : ""))", rows: chartRows)
            print(drawing.write(to: chart) ? "bench: chart written to \(chart)"
                : "bench: could not write the chart to \(chart) (errno \(errno))")
        }
        print("bench: \(rows.count) rows, \(passes) pass, \(misses) miss"
            + (unavailable > 0 ? ", \(unavailable) not available here" : ""))
        fflush(stdout)
    }

    private func serialQueueVariant(_ dispatch: BenchChildResult, _ ringlet: BenchChildResult,
                                    limit: Int) -> [String] {
        let printed = benchStderrNotes("threads (serial queues)", "Dispatch", dispatch)
            + benchStderrNotes("threads (serial queues)", "Ringlet", ringlet)
        func side(_ name: String, _ result: BenchChildResult) -> String {
            if let failure = result.failure { return "\(name) failed: \(failure)" }
            return "\(name) peak \(Int(result["peak"] ?? 0)) threads, wall "
                + benchFigure((result["wall_ns"] ?? 0) / 1e9) + " s"
        }
        var notes = ["threads, same items each on its own serial queue (Dispatch's overcommit pool; not in the "
            + "table): " + side("Dispatch", dispatch) + "; " + side("Ringlet", ringlet)]
        if let peak = ringlet["peak"], Int(peak) > limit {
            notes.append("threads: Ringlet EXCEEDED its limit of \(limit) threads with serial queues")
        }
        return notes + printed
    }

    func rowNotes(_ row: BenchRow, dispatch: BenchChildResult, ringlet: BenchChildResult,
                          scale: BenchScale) -> [String] {
        func runs(_ result: BenchChildResult) -> String {
            (1...scale.repetitions).compactMap { result["run\($0)_ns"].map(benchFigure) }.joined(separator: ", ")
        }
        func us(_ value: Double?) -> String { value.map { benchFigure($0 / 1000) + " µs" } ?? "?" }
        func mib(_ value: Double?) -> String { value.map { benchFigure($0 / 1_048_576) + " MiB" } ?? "?" }
        func seconds(_ value: Double?) -> String { value.map { benchFigure($0 / 1e9) + " s" } ?? "?" }
        switch row {
        case .serialAsync, .serialAsyncGroup, .serialAsyncProducers, .serialAsyncTraced, .pingPong, .sync, .concurrentPerform:
            return ["\(row.rawValue): runs of the best round (ns per unit): Dispatch \(runs(dispatch)); Ringlet \(runs(ringlet))"]
        case .blockingWall:
            return ["blocking-wall: the same run as the threads row; Ringlet's reserve covers the workers the stall "
                + "watch finds asleep in the kernel (usleep is no Ringlet wait), Dispatch adds a thread about once a "
                + "second while its workers block"]
        case .threads:
            return ["threads: wall time for \(scale.blockingItems) items × "
                + "\(scale.blockingNanoseconds / 1_000_000) ms: Dispatch \(seconds(dispatch["wall_ns"])) "
                + "(peak \(Int(dispatch["peak"] ?? 0)) threads), Ringlet \(seconds(ringlet["wall_ns"])) "
                + "(peak \(Int(ringlet["peak"] ?? 0)) threads); threads left after the row: Dispatch "
                + "\(Int(dispatch["threads_after"] ?? 0)), Ringlet \(Int(ringlet["threads_after"] ?? 0))"]
        case .latency, .latencyYieldingFlood:
            func side(_ name: String, _ result: BenchChildResult) -> String {
                let flood = row == .latencyYieldingFlood
                    ? "\(Int(result["flood_started"] ?? 0)) background items ran, \(scale.floodItems) in flight"
                    : "\(Int(result["flood_started"] ?? 0)) of \(scale.floodItems) background items had started, "
                        + "at most \(Int(result["flood_peak_parallel"] ?? 0)) at once"
                return "\(name) p50 \(us(result["p50_ns"])), p99 \(us(result["p99_ns"])), max \(us(result["max_ns"])) "
                    + "(\(Int(result["samples"] ?? 0)) items; \(flood))"
            }
            return ["\(row.rawValue): " + side("Dispatch", dispatch) + "; " + side("Ringlet", ringlet)]
        case .memory, .memoryLabelled:
            let items = Double(scale.queues * scale.pendingPerQueue)
            func perItem(_ result: BenchChildResult) -> String {
                benchFigure((result["rss_delta_bytes"] ?? 0) / items) + " B per pending item (queues included)"
            }
            var notes = ["\(row.rawValue): RSS growth Dispatch \(mib(dispatch["rss_delta_bytes"])) = \(perItem(dispatch)), "
                + "Ringlet \(mib(ringlet["rss_delta_bytes"])) = \(perItem(ringlet)); Ringlet's work-node pool "
                + "(\(mib(ringlet["reserved_bytes"])) reserved at start) is touched only as nodes are first "
                + "used, so the nodes of the pending items count in its growth; baseline RSS Dispatch "
                + "\(mib(dispatch["rss_before_bytes"])), Ringlet \(mib(ringlet["rss_before_bytes"]))"]
            if row == .memoryLabelled {
                func ratio(_ key: String) -> String {
                    guard let d = dispatch[key], let r = ringlet[key], d > 0 else { return "?" }
                    return benchFixed(r / d, 2)
                }
                notes.append("memory-labelled: from the process's start (each runtime's own start included): "
                    + "anonymous RSS Dispatch \(mib(dispatch["anon_from_process_start_bytes"])), Ringlet "
                    + "\(mib(ringlet["anon_from_process_start_bytes"])) (ratio \(ratio("anon_from_process_start_bytes"))); "
                    + "all of VmRSS, code pages included, Dispatch \(mib(dispatch["rss_from_process_start_bytes"])), "
                    + "Ringlet \(mib(ringlet["rss_from_process_start_bytes"])) (ratio "
                    + "\(ratio("rss_from_process_start_bytes"))); the growth after each runtime's start, as the memory "
                    + "row counts it, ratio \(ratio("rss_delta_bytes"))")
            }
            for (name, result) in [("Dispatch", dispatch), ("Ringlet", ringlet)]
            where result["items"] != nil && result["items_run"] != result["items"] {
                notes.append("\(row.rawValue): \(name) ran \(Int(result["items_run"] ?? 0)) of \(Int(items)) items "
                    + "after activation: ITEMS LOST")
            }
            return notes
        case .idleWakeups:
            let seconds = scale.idleNanoseconds / 1_000_000_000
            func side(_ result: BenchChildResult) -> String {
                var text = "\(Int(result["switches"] ?? 0)) switches in \(seconds) s "
                    + "(\(Int(result["voluntary"] ?? 0)) voluntary, \(Int(result["nonvoluntary"] ?? 0)) involuntary; "
                    + "\(Int(result["threads_woken"] ?? 0)) of \(Int(result["threads_watched"] ?? 0)) threads woke, "
                    + "the busiest \(Int(result["busiest_thread_switches"] ?? 0)) times"
                if let exited = result["threads_exited"], exited > 0 { text += "; \(Int(exited)) exited (1 each)" }
                if let created = result["threads_created"], created > 0 { text += "; \(Int(created)) created" }
                return text + ")"
            }
            return ["idle: Dispatch " + side(dispatch) + " — its manager thread, in epoll_wait, wakes about once "
                + "a second, and idle workers exit after ~5 s; Ringlet " + side(ringlet) + ". Every thread but main is counted (voluntary + nonvoluntary context switches "
                + "from /proc/self/task/*/status) while main sleeps, after 20 warm-up items and 200 ms to settle"]
        case .sensorCPU, .sensorWakeups, .sensorEnergy, .sensorMixCPU, .sensorMixWakeups:
            return sensorNotes(row, dispatch: dispatch, ringlet: ringlet, scale: scale)
        case .timers, .timersWindow, .timersCPU, .energy, .strictLateness:
            return timerNotes(row, dispatch: dispatch, ringlet: ringlet, scale: scale)
        case .taskSpawn, .actorPingPong, .taskSleep, .taskThreads, .mainActorP50, .mainActorP99,
             .asyncMainTaskSpawn, .asyncMainActorPingPong, .asyncMainTaskThreads:
            return concurrencyNotes(row, dispatch: dispatch, ringlet: ringlet, scale: scale)
        case .ioSequential, .ioRandom, .ioPipe, .ioThreads:
            return ioNotes(row, dispatch: dispatch, ringlet: ringlet, scale: scale)
        }
    }
}

/// Notes quoting what a child wrote to stderr (distinct lines, at most 4).
func benchStderrNotes(_ row: String, _ side: String, _ result: BenchChildResult) -> [String] {
    var seen: [String] = []
    for line in result.diagnostics where !line.isEmpty && !seen.contains(line) { seen.append(line) }
    let shown = seen.prefix(4).map { "\(row): \(side) side wrote: \($0)" }
    return seen.count > 4 ? shown + ["\(row): \(side) side wrote \(seen.count - 4) more distinct line(s)"] : shown
}
