// The table `ringlet bench` prints: markdown-compatible, one line per row, printed as
// each row finishes. Imports neither Dispatch nor Ringlet.
import Glibc

/// Fixed-point decimal text without Foundation: `benchFixed(3.14159, 2)` → "3.14".
func benchFixed(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "n/a" : (value < 0 ? "-inf" : "inf") }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    var text = "\(whole)"
    if decimals > 0 {
        var digits = "\(fraction)"
        while digits.count < decimals { digits = "0" + digits }
        text += "." + digits
    }
    return (value < 0 && scaled != 0 ? "-" : "") + text
}

/// Three significant digits for figures of any size: 0.0123, 1.23, 12.3, 123, 1234.
func benchFigure(_ value: Double) -> String {
    let magnitude = abs(value)
    if magnitude >= 100 { return benchFixed(value, 0) }
    if magnitude >= 10 { return benchFixed(value, 1) }
    if magnitude >= 1 { return benchFixed(value, 2) }
    if magnitude >= 0.1 { return benchFixed(value, 2) }
    return benchFixed(value, 3)
}

/// The verdict of one row.
enum BenchVerdict: String {
    case pass = "PASS"
    case miss = "MISS"
    /// The machine can't measure the row (energy without a readable RAPL): not judged.
    case unavailable = "not available here"
}

/// One line of the table.
struct BenchTableLine {
    var title: String
    var dispatch: String
    var ringlet: String
    var ratio: String
    var target: String
    var verdict: BenchVerdict
    /// The ratio and the target as numbers, for the chart (nil: none to draw).
    var ratioValue: Double? = nil
    var targetValue: Double? = nil
}

/// Prints the table with fixed column widths so that lines can be printed one by one.
struct BenchTable {
    let widths: [Int]

    init(titleWidth: Int, resultWidth: Int = 6) {
        widths = [max(titleWidth, 9), 10, 10, 16, 12, max(resultWidth, 6)]
    }

    private func line(_ cells: [String], rightAligned: Set<Int>) -> String {
        var text = "|"
        for (i, cell) in cells.enumerated() {
            let pad = String(repeating: " ", count: max(widths[i] - cell.count, 0))
            text += " " + (rightAligned.contains(i) ? pad + cell : cell + pad) + " |"
        }
        return text
    }

    func printHeader() {
        print(line(["benchmark", "Dispatch", "Ringlet", "Ringlet/Dispatch", "target", "result"], rightAligned: []))
        var rule = "|"
        for (i, width) in widths.enumerated() {
            // Figures are right-aligned ("---:"), text left-aligned.
            rule += " " + String(repeating: "-", count: width - 1) + (i >= 1 && i <= 3 ? ":" : "-") + " |"
        }
        print(rule)
        fflush(stdout)
    }

    func printLine(_ row: BenchTableLine) {
        print(line([row.title, row.dispatch, row.ringlet, row.ratio, row.target, row.verdict.rawValue],
                   rightAligned: [1, 2, 3]))
        fflush(stdout)
    }
}
