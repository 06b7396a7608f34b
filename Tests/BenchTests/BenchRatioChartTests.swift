// The chart `ringlet bench --chart FILE` draws next to the table: a valid SVG document
// with a pair of bars (Dispatch, Ringlet) and a target mark per measured row, a line
// that says so for a row without figures, and text escaped.
import BenchSupport
import Testing

@Suite struct BenchRatioChartTests {
    let chart = BenchRatioChart(title: "ringlet bench <2 CPUs> & more", rows: [
        .init(title: "serial async, ns/item", ratio: 0.37, target: 0.25, verdict: "MISS"),
        .init(title: "200 timers, context switches", ratio: 0.013, target: 0.02, verdict: "PASS"),
        .init(title: "peak threads", ratio: 1.8, target: nil, verdict: "PASS"),
        .init(title: "energy (RAPL), J", ratio: nil, target: nil, verdict: "not available here"),
    ])

    func count(_ text: String, in svg: String) -> Int { svg.ranges(of: text).count }

    @Test func everyMeasuredRowIsABarPairWithItsTarget() {
        let svg = chart.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(count("class=\"bar\"", in: svg) == 6, "two bars for each of the three measured rows")
        #expect(count("class=\"target\"", in: svg) == 2)
        #expect(svg.contains(">no figures (not available here)<"))
        for title in ["serial async, ns/item", "200 timers, context switches", "peak threads"] {
            #expect(svg.contains(">\(title)<"), "missing \(title)")
        }
    }

    /// Ringlet's bar ends where its ratio lies on the log axis: 0.013 is shorter than
    /// Dispatch's 1, 1.8 longer.
    @Test func barsAreAsLongAsTheirRatios() {
        let widths = chart.svg().split(separator: "class=\"bar\"").dropFirst().compactMap { part -> Double? in
            guard let after = part.split(separator: "width=\"", maxSplits: 1).dropFirst().first else { return nil }
            return Double(after.prefix { $0 != "\"" })
        }
        #expect(widths.count == 6)
        #expect(widths[0] == widths[2] && widths[2] == widths[4], "Dispatch is 1 in every row")
        #expect(widths[3] < widths[1] && widths[1] < widths[0] && widths[5] > widths[4], "\(widths)")
    }

    @Test func textIsEscaped() {
        let svg = chart.svg()
        #expect(svg.contains("ringlet bench &lt;2 CPUs&gt; &amp; more"))
        #expect(!svg.contains("<2 CPUs>"))
    }
}
