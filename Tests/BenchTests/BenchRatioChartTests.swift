// The chart `ringlet bench --chart FILE` draws next to the table: a valid SVG document
// with a pair of bars (Dispatch, Ringlet) and a target mark per measured row, a line
// that says so for a row without figures, and text escaped.
import BenchSupport
import Glibc
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

    /// `ringlet bench --chart FILE` writes the chart through `write(to:)`: the file holds
    /// the document, a bar pair per measured row.
    @Test func theChartFileIsWrittenWithABarPairPerRow() throws {
        let path = "/tmp/ringlet-bench-chart-test-\(getpid()).svg"
        defer { unlink(path) }
        #expect(chart.write(to: path))
        let file = try #require(fopen(path, "r"))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        fclose(file)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == chart.svg())
        #expect(count("class=\"bar\"", in: text) == 6)
        #expect(!chart.write(to: "/nonexistent-directory/chart.svg"), "an unwritable path is reported")
    }

    @Test func textIsEscaped() {
        let svg = chart.svg()
        #expect(svg.contains("ringlet bench &lt;2 CPUs&gt; &amp; more"))
        #expect(!svg.contains("<2 CPUs>"))
    }
}
