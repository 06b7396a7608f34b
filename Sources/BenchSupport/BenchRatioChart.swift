// The chart `ringlet bench --chart FILE` draws next to the table: one pair of bars per
// row, Dispatch's figure and Ringlet's as ratios to Dispatch's (so Dispatch's bar is 1),
// on a logarithmic axis, with the row's target as a red mark on Ringlet's bar. Plain SVG
// 1.1 text, drawn with BenchChart's colours and text.
import Glibc

package struct BenchRatioChart {
    package struct Row {
        package var title: String
        /// Ringlet / Dispatch (nil: a side failed or the row was not measurable here).
        package var ratio: Double?
        /// The ratio Ringlet must not exceed (for rows judged on an absolute limit, the
        /// limit over Dispatch's figure); nil when there is none to draw.
        package var target: Double?
        package var verdict: String

        package init(title: String, ratio: Double?, target: Double?, verdict: String) {
            self.title = title
            self.ratio = ratio
            self.target = target
            self.verdict = verdict
        }
    }

    package var title: String
    package var rows: [Row]

    package init(title: String, rows: [Row]) {
        self.title = title
        self.rows = rows
    }

    private static let labelWidth = 470.0, plotWidth = 400.0, rowHeight = 30.0, top = 64.0
    /// The axis: 0.001 to 100 (ratios outside are drawn at its ends).
    private static let decades = (low: -3.0, high: 2.0)

    package func svg() -> String {
        let width = Self.labelWidth + Self.plotWidth + 90
        let height = Self.top + Self.rowHeight * Double(max(rows.count, 1)) + 40
        let left = Self.labelWidth, right = Self.labelWidth + Self.plotWidth
        let bottom = Self.top + Self.rowHeight * Double(max(rows.count, 1))
        func px(_ ratio: Double) -> Double {
            let decade = min(max(log10(max(ratio, 1e-9)), Self.decades.low), Self.decades.high)
            return left + (decade - Self.decades.low) / (Self.decades.high - Self.decades.low) * (right - left)
        }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
            + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        out += BenchSVG.text(12, 22, BenchSVG.escape(title), size: 15, weight: "bold")
        for (i, name) in ["Dispatch (1)", "Ringlet / Dispatch"].enumerated() {
            let x = 12 + Double(i) * 130
            out += "<rect x=\"\(BenchSVG.f(x))\" y=\"34\" width=\"22\" height=\"10\" fill=\"\(BenchChart.colours[i])\"/>\n"
                + BenchSVG.text(x + 28, 43, name)
        }
        out += "<rect x=\"300\" y=\"32\" width=\"3\" height=\"14\" fill=\"#c0392b\"/>\n"
            + BenchSVG.text(309, 43, "target (lower is better; log scale)")
        var decade = Self.decades.low
        while decade <= Self.decades.high {
            let x = px(pow(10, decade))
            out += "<line x1=\"\(BenchSVG.f(x))\" y1=\"\(BenchSVG.f(Self.top - 4))\" x2=\"\(BenchSVG.f(x))\" "
                + "y2=\"\(BenchSVG.f(bottom))\" stroke=\"\(decade == 0 ? "#999999" : "#e4e4e4")\"/>\n"
                + BenchSVG.text(x, bottom + 16, label(decade), anchor: "middle")
            decade += 1
        }
        for (index, row) in rows.enumerated() {
            let y = Self.top + Self.rowHeight * Double(index)
            out += BenchSVG.text(left - 8, y + 19, BenchSVG.escape(row.title), size: 11, anchor: "end")
            guard let ratio = row.ratio else {
                out += BenchSVG.text(left + 4, y + 19, "no figures (" + BenchSVG.escape(row.verdict) + ")", size: 11)
                continue
            }
            for (bar, value) in [1.0, ratio].enumerated() {
                out += "<rect class=\"bar\" x=\"\(BenchSVG.f(left))\" y=\"\(BenchSVG.f(y + 4 + Double(bar) * 11))\" "
                    + "width=\"\(BenchSVG.f(max(px(value) - left, 1)))\" height=\"10\" "
                    + "fill=\"\(BenchChart.colours[bar])\"/>\n"
            }
            if let target = row.target {
                out += "<rect class=\"target\" x=\"\(BenchSVG.f(px(target) - 1.5))\" y=\"\(BenchSVG.f(y + 2))\" "
                    + "width=\"3\" height=\"25\" fill=\"#c0392b\"/>\n"
            }
            let colour = row.verdict == "MISS" ? "#c0392b" : "black"
            out += "<text x=\"\(BenchSVG.f(right + 8))\" y=\"\(BenchSVG.f(y + 19))\" font-size=\"11\" "
                + "fill=\"\(colour)\">\(BenchSVG.escape(row.verdict))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// Writes `svg()` to `path` (created or truncated); false when it could not (errno
    /// says why).
    package func write(to path: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        let bytes = Array(svg().utf8)
        let written = fwrite(bytes, 1, bytes.count, file)
        return fclose(file) == 0 && written == bytes.count
    }

    private func label(_ decade: Double) -> String {
        switch Int(decade) {
        case ..<0: return "0." + String(repeating: "0", count: -Int(decade) - 1) + "1"
        default:
            var text = "1"
            for _ in 0..<Int(decade) { text += "0" }
            return text
        }
    }
}
