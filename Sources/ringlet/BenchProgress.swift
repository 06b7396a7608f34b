// What `ringlet bench` tells stderr while it runs (issue 15): which row, n of m, which
// side and the time since the run began. On a terminal one line rewritten in place and
// cleared at the end; with `--progress` and stderr not a terminal (a CI log) one plain
// line per child process, so the log stays readable. Silent otherwise: the table on
// stdout is the same either way. Imports neither Dispatch nor Ringlet.
import BenchSupport
import Glibc

struct BenchProgress {
    private let enabled: Bool
    private let inPlace: Bool
    private let total: Int
    private let start = benchNow()
    private var shown = false

    /// `requested`: --progress. On when stderr is a terminal or when requested.
    init(requested: Bool, total: Int) {
        let terminal = isatty(2) == 1
        enabled = terminal || requested
        inPlace = terminal
        self.total = total
    }

    /// Before a child process: row `index` (from 0) of the run, its name and the side.
    mutating func update(_ index: Int, _ name: String, _ what: String) {
        guard enabled else { return }
        let elapsed = Double(benchNow() - start) / 1e9
        let line = "bench: [\(index + 1)/\(total)] \(name): \(what), \(benchFixed(elapsed, 1)) s elapsed"
        // "\r\u{1B}[K": back to the start of the line and clear it.
        fputs(inPlace ? "\r\u{1B}[K" + line : line + "\n", stderr)
        fflush(stderr)
        shown = true
    }

    /// Before a line goes to stdout: clears the in-place line, so that a table line on
    /// the same terminal does not land behind it (the next `update` draws it again).
    mutating func clear() {
        guard inPlace, shown else { return }
        fputs("\r\u{1B}[K", stderr)
        fflush(stderr)
        shown = false
    }

    /// After the last row: clears the in-place line, or says how long the run took.
    mutating func finish() {
        guard enabled, shown || !inPlace else { return }
        let elapsed = Double(benchNow() - start) / 1e9
        fputs(inPlace ? "\r\u{1B}[K" : "bench: done, \(total) rows in \(benchFixed(elapsed, 1)) s\n", stderr)
        fflush(stderr)
    }
}
