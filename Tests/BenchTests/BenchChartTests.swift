// The chart `ringlet bench --scale --chart FILE` draws (the README shows it): a valid
// SVG document with one line and one dot per point for each runtime, the loads on the
// x axis, and text escaped.
import BenchSupport
import Testing

@Suite struct BenchChartTests {
    let chart = BenchChart(title: "scale <test> & more", panels: [
        .init(title: "timers: CPU µs per fire", xLabel: "timers",
              series: [("Dispatch", [(100, 40), (1_000, 20), (10_000, 4)]),
                       ("Ringlet", [(100, 20), (1_000, 12), (10_000, 12)])]),
        .init(title: "sources: µs per event", xLabel: "read sources",
              series: [("Dispatch", [(10, 30)]), ("Ringlet", [])]),
        .init(title: "failed", xLabel: "queues", series: [("Dispatch", []), ("Ringlet", [])]),
    ])

    func count(_ text: String, in svg: String) -> Int { svg.ranges(of: text).count }

    @Test func everySeriesWithPointsIsALineWithItsDots() {
        let svg = chart.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(count("<polyline", in: svg) == 3, "two lines in the first panel, one in the second")
        #expect(count("<circle", in: svg) == 7)
        #expect(count("stroke=\"#1f6fb4\" stroke-width=\"2.5\"", in: svg) == 1, "Ringlet's one non-empty series")
    }

    @Test func theLoadsLabelTheXAxisAndAnEmptyPanelSaysSo() {
        let svg = chart.svg()
        for label in [">100<", ">1,000<", ">10,000<", ">timers (log scale)<", ">read sources (log scale)<"] {
            #expect(svg.contains(label), "missing \(label)")
        }
        #expect(svg.contains(">no figures (see the table)<"))
    }

    @Test func textIsEscaped() {
        let svg = chart.svg()
        #expect(svg.contains("scale &lt;test&gt; &amp; more"))
        #expect(!svg.contains("<test>"))
    }

    /// Every y value lies inside its panel: the highest point is below the top margin.
    @Test func pointsStayInsideThePanel() {
        let svg = chart.svg()
        let ys = svg.split(separator: "cy=\"", omittingEmptySubsequences: false).dropFirst().compactMap { Double($0.prefix { $0 != "\"" }) }
        #expect(ys.count == 7)
        #expect(ys.allSatisfy { $0 >= 40 + 34 && $0 <= 40 + 260 * 2 }, "\(ys)")
    }
}
