// How `ringlet bench` judges one row: the table line (both figures, the ratio, the
// target, PASS/MISS or "not available here") and the notes under the table. Imports
// neither Dispatch nor Ringlet.
import BenchSupport

extension Bench {
    /// The table line and the detail notes of one row.
    func judge(_ row: BenchRow, dispatch: BenchChildResult, ringlet: BenchChildResult,
                       workers: Int, reserve: Int) -> (BenchTableLine, [String]) {
        let scale = self.scale
        var notes: [String] = []
        let key = row.headlineKey
        let d = dispatch.failure == nil ? dispatch[key] : nil
        let r = ringlet.failure == nil ? ringlet[key] : nil
        for (name, result) in [("Dispatch", dispatch), ("Ringlet", ringlet)] {
            if let failure = result.failure { notes.append("\(row.rawValue): \(name) side failed: \(failure)") }
            notes += benchStderrNotes(row.rawValue, name, result)
        }

        func show(_ value: Double?) -> String { value.map(row.display) ?? "error" }
        var ratio: Double?
        if let d, let r, d > 0 { ratio = r / d }
        let target: String
        let pass: Bool
        var targetValue: Double?
        if let limitRatio = row.targetRatio {
            targetValue = limitRatio
            target = "≤ " + benchFigure(limitRatio)
            pass = ratio.map { $0 <= limitRatio } ?? false
        } else if row == .idleWakeups || row == .timersWindow || row == .ioThreads {
            // Idle wake-ups: an idle Ringlet has no timer, so none of its threads may wake.
            // Timer window: no fire of Ringlet's may be early or late beyond leeway + 1 ms.
            target = "≤ 0"
            pass = r.map { $0 <= 0 } ?? false
            targetValue = d.flatMap { $0 > 0 ? 0 : nil }
        } else {
            // Threads (items or tasks): Ringlet's pool and manager plus the threads that existed before it
            // (main) and the sampler.
            let before = Int(ringlet["threads_before"] ?? 1)
            let limit = workers + reserve + 1 + before + 1
            target = "≤ \(limit) threads"
            targetValue = d.flatMap { $0 > 0 ? Double(limit) / $0 : nil }
            pass = r.map { Int($0) <= limit } ?? false
            notes.append("\(row.rawValue): limit \(limit) = \(workers) workers + \(reserve) reserve + 1 manager + \(before) "
                + "thread(s) before the runtime started (main) + 1 sampler")
        }
        if ringlet.failure == nil && dispatch.failure == nil && r != nil && d != nil {
            notes += rowNotes(row, dispatch: dispatch, ringlet: ringlet, scale: scale)
        }
        // A sleep that ended early or a hop off the main thread is wrong, whatever it cost.
        let wrong = concurrencyFailures(row, dispatch: dispatch, ringlet: ringlet)
        notes += wrong.notes
        let verdict: BenchVerdict = pass && !wrong.miss ? .pass : .miss
        if let waits = ringlet["node_exhaustion_waits"], waits > 0 {
            notes.append("\(row.rawValue): Ringlet submitters waited \(Int(waits)) time(s) for a free work node "
                + "(peak \(Int(ringlet["nodes_peak"] ?? 0)) in use)")
        }
        var line = BenchTableLine(title: row.title(scale), dispatch: show(d), ringlet: show(r),
                                  ratio: ratio.map(benchFigure) ?? "n/a", target: target,
                                  verdict: verdict, ratioValue: ratio, targetValue: targetValue)
        if row == .energy && [dispatch, ringlet].contains(where: { $0.failure == nil && $0["energy_available"] == 0 }) {
            // No figures to judge: neither a pass nor a miss.
            line.dispatch = "—"
            line.ringlet = "—"
            line.ratio = "—"
            line.ratioValue = nil
            line.verdict = .unavailable
            let packages = Int(ringlet["rapl_packages"] ?? dispatch["rapl_packages"] ?? 0)
            notes.append("energy: not available here: " + (packages == 0
                ? "no RAPL package domain under /sys/class/powercap (intel-rapl:N or amd-rapl:N); the "
                    + "sensor rows estimate energy from CPU time and wake-ups instead"
                : "\(packages) RAPL package(s) but energy_uj is not readable (root only since Linux 5.10); the "
                    + "sensor rows estimate energy from CPU time and wake-ups instead"))
        }
        return (line, notes)
    }
}
