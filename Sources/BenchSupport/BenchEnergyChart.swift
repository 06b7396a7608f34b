// The chart `ringlet bench-energy --chart FILE` draws: its four sides side by side in
// three panels. Plain SVG 1.1 text.
import Glibc

/// Three panels of four bars — wake-ups per second, CPU ms and p99 lateness in ms — one
/// bar per side, each panel scaled to its largest bar. Plain SVG 1.1.
package struct BenchEnergyChart {
    /// One side: its title and its three figures (nil: the side failed).
    package struct Side {
        package let title: String
        package let figures: (wakeupsPerSecond: Double, cpuMilliseconds: Double, p99Milliseconds: Double)?

        package init(title: String, figures: (wakeupsPerSecond: Double, cpuMilliseconds: Double, p99Milliseconds: Double)?) {
            self.title = title
            self.figures = figures
        }
    }

    package let sides: [Side]
    package let seconds: Double

    package init(sides: [Side], seconds: Double) {
        self.sides = sides
        self.seconds = seconds
    }

    private static let colours = ["#2f6db5", "#8a8a8a", "#c0783c", "#6aa84f"]

    package func svg() -> String {
        let metrics: [(String, (Side) -> Double)] = [
            ("wake-ups per second", { $0.figures?.wakeupsPerSecond ?? 0 }),
            ("CPU time, ms", { $0.figures?.cpuMilliseconds ?? 0 }),
            ("p99 lateness, ms", { $0.figures?.p99Milliseconds ?? 0 })]
        let panelWidth = 260.0, barWidth = 44.0, plot = 200.0, top = 70.0
        let width = panelWidth * Double(metrics.count) + 40
        let height = top + plot + 60 + 18 * Double(sides.count)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
            + "font-family=\"sans-serif\" font-size=\"12\">\n"
            + "<text x=\"20\" y=\"24\" font-size=\"15\">ringlet bench-energy: the logger, \(Int(seconds)) s per side</text>\n"
        for (panel, metric) in metrics.enumerated() {
            let left = 20 + panelWidth * Double(panel)
            let values = sides.map(metric.1)
            let largest = max(values.max() ?? 0, 1e-9)
            svg += "<text x=\"\(left)\" y=\"\(top - 16)\">\(BenchSVG.escape(metric.0))</text>\n"
            for (index, value) in values.enumerated() {
                let barHeight = plot * value / largest
                let x = left + Double(index) * (barWidth + 12)
                svg += "<rect x=\"\(x)\" y=\"\(top + plot - barHeight)\" width=\"\(barWidth)\" height=\"\(barHeight)\" "
                    + "fill=\"\(Self.colours[index % Self.colours.count])\"/>\n"
                svg += "<text x=\"\(x + barWidth / 2)\" y=\"\(top + plot - barHeight - 4)\" text-anchor=\"middle\">"
                    + Self.figure(value) + "</text>\n"
            }
        }
        for (index, side) in sides.enumerated() {
            let y = top + plot + 30 + 18 * Double(index)
            svg += "<rect x=\"20\" y=\"\(y - 10)\" width=\"12\" height=\"12\" fill=\"\(Self.colours[index % Self.colours.count])\"/>"
                + "<text x=\"38\" y=\"\(y)\">\(BenchSVG.escape(side.title + (side.figures == nil ? " (failed)" : "")))</text>\n"
        }
        return svg + "</svg>\n"
    }

    package func write(to path: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        defer { fclose(file) }
        return fputs(svg(), file) >= 0
    }

    /// Three significant digits at most (12345, 123, 12.3, 1.23, 0.12).
    static func figure(_ value: Double) -> String {
        if value >= 100 { return String(Int(value.rounded())) }
        let scale = value >= 10 ? 10.0 : 100.0
        return String((value * scale).rounded() / scale)
    }
}
