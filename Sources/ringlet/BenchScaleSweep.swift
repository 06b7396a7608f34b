// `ringlet bench --scale`: every sweep of BenchSweep at each of its loads, each point
// of each side in a fresh child process, as the rows of `ringlet bench` are run. Prints
// a table per sweep and how much each runtime's cost per unit grows from the smallest
// load to the largest; with `--chart FILE` draws the curves (BenchChart.swift).
import BenchSupport
import Glibc

/// One measured point: a sweep's load and both sides' results.
struct BenchSweepPoint {
    let load: Int
    let dispatch: BenchChildResult
    let ringlet: BenchChildResult
}

struct BenchSweepRunner {
    let quick: Bool

    func run(chart: String?) {
        let machine = BenchMachine.current()
        print("# ringlet bench --scale\(quick ? " (--quick: smoke sizes, not a measurement)" : "")")
        print("")
        print("- machine: \(machine.cpus) online CPUs, \(machine.cpuModel), Linux \(machine.kernel)")
        print("- each point of each side runs in a fresh child process; ratio = Ringlet/Dispatch, lower is better;")
        print("  growth = the cost per unit at the largest load / at the smallest (1.0 = flat)")
        var results: [(BenchSweep, [BenchSweepPoint])] = []
        for sweep in BenchSweep.allCases {
            let points = sweep.loads.map { load in
                BenchSweepPoint(load: load, dispatch: measure(sweep, load, .dispatch),
                                ringlet: measure(sweep, load, .ringlet))
            }
            printTable(sweep, points)
            results.append((sweep, points))
        }
        if let chart {
            let svg = BenchChart(title: "ringlet bench --scale (\(machine.cpus) CPUs, \(machine.cpuModel))",
                                 panels: results.map(panel)).svg()
            if benchWriteFile(chart, svg) {
                print("bench --scale: chart written to \(chart)")
            } else {
                print("bench --scale: could not write the chart to \(chart) (errno \(errno))")
            }
        }
        fflush(stdout)
    }

    private func measure(_ sweep: BenchSweep, _ load: Int, _ side: BenchSide) -> BenchChildResult {
        var arguments = ["bench", "--sweep-child", sweep.rawValue, "--load", "\(load)", "--side", side.rawValue]
        if quick { arguments.append("--quick") }
        return benchRunChild(benchExecutablePath(), arguments, side: side, timeoutSeconds: sweep.timeoutSeconds)
    }

    private func printTable(_ sweep: BenchSweep, _ points: [BenchSweepPoint]) {
        print("")
        print("## \(sweep.rawValue)")
        print("")
        print("| \(sweep.loadName) | figure | Dispatch | Ringlet | ratio |")
        print("| ---: | --- | ---: | ---: | ---: |")
        var notes: [String] = []
        for point in points {
            for (key, title) in sweep.figures {
                let divisor = sweep.displayDivisor(key)
                let d = value(point.dispatch, key).map { $0 / divisor }
                let r = value(point.ringlet, key).map { $0 / divisor }
                let ratio = d.flatMap { d in r.map { d > 0 ? benchFigure($0 / d) : "n/a" } } ?? "n/a"
                print("| \(point.load) | \(title) | \(d.map(benchFigure) ?? "error") | "
                    + "\(r.map(benchFigure) ?? "error") | \(ratio) |")
            }
            for (name, result) in [("Dispatch", point.dispatch), ("Ringlet", point.ringlet)] {
                if let failure = result.failure { notes.append("\(sweep.rawValue) \(point.load): \(name) failed: \(failure)") }
                notes += benchStderrNotes("\(sweep.rawValue) \(point.load)", name, result)
            }
        }
        print("")
        for (key, title) in sweep.figures {
            func growth(_ side: KeyPath<BenchSweepPoint, BenchChildResult>) -> String {
                guard let first = points.first.flatMap({ value($0[keyPath: side], key) }),
                      let last = points.last.flatMap({ value($0[keyPath: side], key) }), first > 0 else { return "n/a" }
                return benchFigure(last / first) + "×"
            }
            print("- \(sweep.rawValue), \(title): growth from \(points.first?.load ?? 0) to \(points.last?.load ?? 0) "
                + "\(sweep.loadName): Dispatch \(growth(\.dispatch)), Ringlet \(growth(\.ringlet))")
        }
        for note in notes { print("- " + note) }
    }

    private func value(_ result: BenchChildResult, _ key: String) -> Double? {
        result.failure == nil ? result[key] : nil
    }

    /// The chart panel of a sweep: its first figure against the load.
    private func panel(_ sweep: BenchSweep, _ points: [BenchSweepPoint]) -> BenchChart.Panel {
        let (key, title) = sweep.figures[0]
        let divisor = sweep.displayDivisor(key)
        func series(_ side: KeyPath<BenchSweepPoint, BenchChildResult>) -> [(Double, Double)] {
            points.compactMap { point in value(point[keyPath: side], key).map { (Double(point.load), $0 / divisor) } }
        }
        return BenchChart.Panel(title: "\(sweep.rawValue): \(title)", xLabel: sweep.loadName,
                                series: [("Dispatch", series(\.dispatch)), ("Ringlet", series(\.ringlet))])
    }
}

/// Writes `text` to `path`; false when it could not.
func benchWriteFile(_ path: String, _ text: String) -> Bool {
    guard let file = fopen(path, "w") else { return false }
    let bytes = Array(text.utf8)
    let written = fwrite(bytes, 1, bytes.count, file)
    return fclose(file) == 0 && written == bytes.count
}
