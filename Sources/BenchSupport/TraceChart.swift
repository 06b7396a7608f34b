// The SVG `ringlet trace FILE` draws: one lane per thread, each item a bar coloured by
// its QoS (with a legend), the manager's timer windows and source events as marks on
// their lane, and a time axis. Plain SVG 1.1 in BenchChart's style; each bar and mark
// carries a <title>, so a browser shows the queue, the QoS and the duration on hover.
import Glibc

package struct TraceChart {
    package var title: String
    package var timeline: TraceTimeline

    package init(title: String, timeline: TraceTimeline) {
        self.title = title
        self.timeline = timeline
    }

    /// QoS classes, most urgent first, and their colours.
    static let qosColours: [(qos: String, colour: String)] = [
        ("userInteractive", "#d62728"), ("userInitiated", "#ff7f0e"), ("default", "#1f6fb4"),
        ("utility", "#2ca02c"), ("background", "#8a8a8a"), ("unspecified", "#c7c7c7"),
    ]
    static let timerColour = "#9467bd", sourceColour = "#17becf"
    private static let width = 1100.0, labelWidth = 170.0, right = 24.0, laneHeight = 26.0, top = 64.0

    static func colour(of qos: String) -> String {
        qosColours.first { $0.qos == qos }?.colour ?? "#c7c7c7"
    }

    package func svg() -> String {
        let lanes = timeline.lanes
        let plotLeft = Self.labelWidth, plotRight = Self.width - Self.right
        let plotBottom = Self.top + Self.laneHeight * Double(max(lanes.count, 1))
        let height = plotBottom + 52
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(Self.width))\" height=\"\(Int(height))\" "
            + "viewBox=\"0 0 \(Int(Self.width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        out += BenchSVG.text(12, 22, escape(title), size: 15, weight: "bold")
        if timeline.droppedEvents > 0 {
            out += BenchSVG.text(plotRight, 22, "\(timeline.droppedEvents) older event(s) dropped (full rings)", anchor: "end")
        }
        out += legend(y: 44)
        let (start, end) = timeline.span
        let duration = max(end - start, 1)
        func px(_ time: Double) -> Double { plotLeft + (time - start) / duration * (plotRight - plotLeft) }
        var laneY: [Int: Double] = [:]
        for (index, lane) in lanes.enumerated() {
            let y = Self.top + Double(index) * Self.laneHeight
            laneY[lane.tid] = y
            if index % 2 == 1 {
                out += "<rect x=\"\(BenchSVG.f(plotLeft))\" y=\"\(BenchSVG.f(y))\" width=\"\(BenchSVG.f(plotRight - plotLeft))\" "
                    + "height=\"\(BenchSVG.f(Self.laneHeight))\" fill=\"#f4f4f4\"/>\n"
            }
            out += "<g class=\"lane\">" + BenchSVG.text(plotLeft - 8, y + Self.laneHeight / 2 + 4, escape(lane.name), anchor: "end")
                + "</g>\n"
        }
        for bar in timeline.bars {
            guard let y = laneY[bar.tid] else { continue }
            let x = px(bar.start), w = max(px(bar.end) - x, 1)
            out += "<rect class=\"item\" x=\"\(BenchSVG.f(x))\" y=\"\(BenchSVG.f(y + 4))\" width=\"\(BenchSVG.f(w))\" "
                + "height=\"\(BenchSVG.f(Self.laneHeight - 8))\" fill=\"\(Self.colour(of: bar.qos))\"><title>"
                + escape("\(bar.label) at \(bar.qos), \(short(bar.end - bar.start)) µs") + "</title></rect>\n"
        }
        for mark in timeline.marks {
            guard let y = laneY[mark.tid] else { continue }
            let x = px(mark.time)
            let isTimer = mark.name == "timer window"
            let colour = isTimer ? Self.timerColour : Self.sourceColour
            out += "<path class=\"\(isTimer ? "timer" : "source")\" d=\"M\(BenchSVG.f(x - 4)),\(BenchSVG.f(y + 2)) L\(BenchSVG.f(x + 4)),\(BenchSVG.f(y + 2)) "
                + "L\(BenchSVG.f(x)),\(BenchSVG.f(y + 10)) Z\" fill=\"\(colour)\"><title>" + escape("\(mark.name): \(mark.detail)")
                + "</title></path>\n"
            out += "<line x1=\"\(BenchSVG.f(x))\" y1=\"\(BenchSVG.f(y + 10))\" x2=\"\(BenchSVG.f(x))\" y2=\"\(BenchSVG.f(y + Self.laneHeight - 2))\" "
                + "stroke=\"\(colour)\"/>\n"
        }
        out += axis(start: start, duration: duration, left: plotLeft, right: plotRight, y: plotBottom)
        return out + "</svg>\n"
    }

    private func legend(y: Double) -> String {
        var out = ""
        var x = Self.labelWidth
        for (qos, colour) in Self.qosColours {
            out += "<rect x=\"\(BenchSVG.f(x))\" y=\"\(BenchSVG.f(y - 10))\" width=\"14\" height=\"12\" fill=\"\(colour)\"/>\n"
                + BenchSVG.text(x + 18, y, qos)
            x += 18 + Double(qos.count) * 7 + 14
        }
        for (name, colour) in [("timer window", Self.timerColour), ("source event", Self.sourceColour)] {
            out += "<path d=\"M\(BenchSVG.f(x)),\(BenchSVG.f(y - 10)) L\(BenchSVG.f(x + 10)),\(BenchSVG.f(y - 10)) L\(BenchSVG.f(x + 5)),\(BenchSVG.f(y)) Z\" "
                + "fill=\"\(colour)\"/>\n" + BenchSVG.text(x + 14, y, name)
            x += 14 + Double(name.count) * 7 + 14
        }
        return out
    }

    /// The time axis: 4-8 ticks at a round step (1, 2 or 5 times a power of ten),
    /// in µs or ms from the first event.
    private func axis(start: Double, duration: Double, left: Double, right: Double, y: Double) -> String {
        var out = "<line x1=\"\(BenchSVG.f(left))\" y1=\"\(BenchSVG.f(y))\" x2=\"\(BenchSVG.f(right))\" y2=\"\(BenchSVG.f(y))\" stroke=\"black\"/>\n"
        let rough = duration / 6
        let power = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? rough
        let inMilliseconds = duration >= 5000
        var tick = 0.0
        while tick <= duration * 1.0001 {
            let x = left + tick / duration * (right - left)
            out += "<line x1=\"\(BenchSVG.f(x))\" y1=\"\(BenchSVG.f(y))\" x2=\"\(BenchSVG.f(x))\" y2=\"\(BenchSVG.f(y + 5))\" stroke=\"black\"/>\n"
                + BenchSVG.text(x, y + 18, inMilliseconds ? short(tick / 1000) : short(tick), anchor: "middle")
            tick += step
        }
        out += BenchSVG.text((left + right) / 2, y + 38, inMilliseconds ? "ms since the first event" : "µs since the first event",
                    anchor: "middle")
        return out
    }

    private func short(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(Double(Int(value * 100)) / 100)
    }

    private func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
