// A small SVG line chart for `ringlet bench --scale`: one panel per sweep, the load on a
// logarithmic x axis, the cost per unit on a linear y axis from zero, one line per
// runtime. Plain SVG 1.1 text, so that a README on any forge shows it.
import Glibc

package struct BenchChart {
    package struct Panel {
        package var title: String
        package var xLabel: String
        /// (name, points (x, y)) per runtime, in the order of `BenchChart.colours`.
        package var series: [(name: String, points: [(Double, Double)])]

        package init(title: String, xLabel: String, series: [(name: String, points: [(Double, Double)])]) {
            self.title = title
            self.xLabel = xLabel
            self.series = series
        }
    }

    package var title: String
    package var panels: [Panel]

    package init(title: String, panels: [Panel]) {
        self.title = title
        self.panels = panels
    }

    /// Dispatch grey, Ringlet blue (BenchRatioChart uses them too).
    static let colours = ["#8a8a8a", "#1f6fb4"]
    private static let panelWidth = 420.0, panelHeight = 260.0, columns = 2
    private static let margin = (left: 64.0, right: 30.0, top: 34.0, bottom: 44.0)

    package func svg() -> String {
        let rows = (panels.count + Self.columns - 1) / Self.columns
        let width = Self.panelWidth * Double(Self.columns)
        let height = 56 + Self.panelHeight * Double(rows)
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
            + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        out += text(12, 22, escape(title), size: 15, weight: "bold")
        for (i, series) in (panels.first?.series ?? []).enumerated() {
            let x = width - 220 + Double(i) * 100
            out += "<line x1=\"\(f(x))\" y1=\"18\" x2=\"\(f(x + 24))\" y2=\"18\" stroke=\"\(Self.colours[i % 2])\" "
                + "stroke-width=\"3\"/>\n" + text(x + 30, 22, escape(series.name))
        }
        for (index, panel) in panels.enumerated() {
            let x = Double(index % Self.columns) * Self.panelWidth
            let y = 40 + Double(index / Self.columns) * Self.panelHeight
            out += draw(panel, atX: x, y: y)
        }
        return out + "</svg>\n"
    }

    private func draw(_ panel: Panel, atX originX: Double, y originY: Double) -> String {
        let m = Self.margin
        let left = originX + m.left, right = originX + Self.panelWidth - m.right
        let top = originY + m.top, bottom = originY + Self.panelHeight - m.bottom
        let points = panel.series.flatMap(\.points)
        var out = text(originX + m.left, originY + 20, escape(panel.title), weight: "bold")
        guard let minX = points.map(\.0).min(), let maxX = points.map(\.0).max(),
              let maxY = points.map(\.1).max(), maxY > 0 else {
            return out + text(left, (top + bottom) / 2, "no figures (see the table)")
        }
        let logMin = log10(max(minX, 1)), logMax = log10(max(maxX, minX * 10, 10))
        func px(_ value: Double) -> Double { left + (log10(max(value, 1)) - logMin) / (logMax - logMin) * (right - left) }
        // Gridlines at a round step (1, 2 or 5 times a power of ten), four or five of them.
        let rough = maxY * 1.1 / 4
        let power = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? rough
        let steps = Int((maxY * 1.05 / step).rounded(.up))
        let yTop = step * Double(steps)
        func py(_ value: Double) -> Double { bottom - value / yTop * (bottom - top) }
        out += "<line x1=\"\(f(left))\" y1=\"\(f(bottom))\" x2=\"\(f(right))\" y2=\"\(f(bottom))\" stroke=\"black\"/>\n"
        out += "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(bottom))\" stroke=\"black\"/>\n"
        for load in Set(points.map(\.0)).sorted() {
            out += "<line x1=\"\(f(px(load)))\" y1=\"\(f(bottom))\" x2=\"\(f(px(load)))\" y2=\"\(f(bottom + 4))\" "
                + "stroke=\"black\"/>\n" + text(px(load), bottom + 17, grouped(Int(load)), anchor: "middle")
        }
        out += text((left + right) / 2, bottom + 34, escape(panel.xLabel) + " (log scale)", anchor: "middle")
        for index in 0...steps {
            let value = step * Double(index)
            out += "<line x1=\"\(f(left))\" y1=\"\(f(py(value)))\" x2=\"\(f(right))\" y2=\"\(f(py(value)))\" "
                + "stroke=\"#e4e4e4\"/>\n" + text(left - 6, py(value) + 4, short(value), anchor: "end")
        }
        for (i, series) in panel.series.enumerated() where !series.points.isEmpty {
            let colour = Self.colours[i % 2]
            let path = series.points.map { "\(f(px($0.0))),\(f(py($0.1)))" }.joined(separator: " ")
            out += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2.5\"/>\n"
            for (x, y) in series.points {
                out += "<circle cx=\"\(f(px(x)))\" cy=\"\(f(py(y)))\" r=\"3.5\" fill=\"\(colour)\"/>\n"
            }
        }
        return out
    }

    private func text(_ x: Double, _ y: Double, _ content: String, size: Int = 12, weight: String = "normal",
                      anchor: String = "start") -> String {
        BenchSVG.text(x, y, content, size: size, weight: weight, anchor: anchor)
    }

    private func f(_ value: Double) -> String { BenchSVG.f(value) }

    private func short(_ value: Double) -> String {
        value >= 100 ? grouped(Int(value.rounded())) : String(Double(Int(value * 100)) / 100)
    }

    private func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var out = ""
        for (i, digit) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }

    private func escape(_ text: String) -> String { BenchSVG.escape(text) }
}

/// The SVG text the charts write (BenchChart, BenchRatioChart, TraceChart).
enum BenchSVG {
    static func text(_ x: Double, _ y: Double, _ content: String, size: Int = 12, weight: String = "normal",
                     anchor: String = "start") -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(size)\" font-weight=\"\(weight)\" "
            + "text-anchor=\"\(anchor)\">\(content)</text>\n"
    }

    /// A coordinate with one decimal.
    static func f(_ value: Double) -> String { String(Double(Int(value * 10)) / 10) }

    static func escape(_ text: String) -> String {
        text.replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;").replacingAll(">", with: "&gt;")
    }
}

private extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
