// The timeline `ringlet trace FILE` draws from a trace the runtime wrote: one lane per
// named thread, a bar per item coloured by its QoS, the manager's timer windows as
// marks, a legend and a time axis; bad input is refused with a reason.
import BenchSupport
import Testing

@Suite struct TraceChartTests {
    /// Three lanes (the manager, two workers), three items (one still open at the end:
    /// it becomes a bar to the last event), two timer windows, one source event.
    static let trace = #"""
        {"traceEvents":[
        {"name":"process_name","ph":"M","pid":7,"tid":7,"args":{"name":"ringlet process 7"}},
        {"name":"thread_name","ph":"M","pid":7,"tid":10,"args":{"name":"manager","droppedEvents":0}},
        {"name":"thread_sort_index","ph":"M","pid":7,"tid":10,"args":{"sort_index":0}},
        {"name":"thread_name","ph":"M","pid":7,"tid":11,"args":{"name":"worker 0 (high)","droppedEvents":0}},
        {"name":"thread_sort_index","ph":"M","pid":7,"tid":11,"args":{"sort_index":1}},
        {"name":"thread_name","ph":"M","pid":7,"tid":12,"args":{"name":"worker 2 (utility)","droppedEvents":0}},
        {"name":"thread_sort_index","ph":"M","pid":7,"tid":12,"args":{"sort_index":3}},
        {"name":"enqueue","cat":"enqueue","ph":"i","s":"t","ts":1.000,"pid":7,"tid":11,"args":{"queue":"a","qos":"default"}},
        {"name":"a <&>","cat":"item","ph":"B","ts":2.000,"pid":7,"tid":11,"args":{"queue":"a <&>","qos":"userInitiated","kind":"block"}},
        {"ph":"E","ts":12.500,"pid":7,"tid":11},
        {"name":"b","cat":"item","ph":"B","ts":5.000,"pid":7,"tid":12,"args":{"queue":"b","qos":"utility","kind":"block"}},
        {"ph":"E","ts":40.000,"pid":7,"tid":12},
        {"name":"c","cat":"job","ph":"B","ts":50.000,"pid":7,"tid":11,"args":{"queue":"c","qos":"default","kind":"job"}},
        {"name":"manager wake","cat":"manager","ph":"i","s":"t","ts":19.9,"pid":7,"tid":10,"args":{}},
        {"name":"timer window","cat":"timer","ph":"i","s":"t","ts":20.000,"pid":7,"tid":10,"args":{"timers":3}},
        {"name":"timer window","cat":"timer","ph":"i","s":"t","ts":60.000,"pid":7,"tid":10,"args":{"timers":1}},
        {"name":"source event","cat":"source","ph":"i","s":"t","ts":30.000,"pid":7,"tid":10,"args":{"kind":"read","fd":5}}
        ],
        "displayTimeUnit":"ns",
        "otherData":{"droppedEvents":4,"eventsPerThread":64,"recordedEvents":20}}
        """#

    func count(_ text: String, in svg: String) -> Int { svg.ranges(of: text).count }

    @Test func oneLanePerThreadAndABarPerItem() throws {
        let timeline = try TraceTimeline(json: Self.trace)
        #expect(timeline.lanes.map(\.name) == ["manager", "worker 0 (high)", "worker 2 (utility)"])
        #expect(timeline.bars.count == 3)
        #expect(timeline.droppedEvents == 4)
        let svg = TraceChart(title: "t", timeline: timeline).svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(count("<g class=\"lane\">", in: svg) == 3)
        #expect(count("<rect class=\"item\"", in: svg) == 3)
        for lane in [">manager<", ">worker 0 (high)<", ">worker 2 (utility)<"] { #expect(svg.contains(lane), "\(lane)") }
    }

    @Test func barsAreColouredByQoSWithALegend() throws {
        let svg = TraceChart(title: "t", timeline: try TraceTimeline(json: Self.trace)).svg()
        #expect(count("class=\"item\"", in: svg) == 3)
        #expect(svg.contains("fill=\"#ff7f0e\"><title>a &lt;&amp;&gt; at userInitiated"), "escaped, userInitiated orange")
        #expect(svg.contains("fill=\"#2ca02c\"><title>b at utility, 35.0 µs"))
        #expect(svg.contains("fill=\"#1f6fb4\"><title>c at default"), "the open job ends at the last event")
        for qos in [">userInteractive<", ">userInitiated<", ">default<", ">utility<", ">background<", ">timer window<"] {
            #expect(svg.contains(qos), "legend \(qos)")
        }
        #expect(svg.contains(">4 older event(s) dropped (full rings)<"))
    }

    @Test func timerWindowsAreMarkedOnTheManagerLaneAndTheAxisIsLabelled() throws {
        let svg = TraceChart(title: "t", timeline: try TraceTimeline(json: Self.trace)).svg()
        #expect(count("<path class=\"timer\"", in: svg) == 2)
        #expect(svg.contains("<title>timer window: 3 timer(s)</title>"))
        #expect(count("<path class=\"source\"", in: svg) == 1)
        #expect(svg.contains(">µs since the first event<"))
        #expect(svg.contains(">0.0<") || svg.contains(">0<"), "the axis starts at 0")
    }

    @Test func whatIsNotATraceIsRefusedWithAReason() {
        #expect(throws: JSONError.self) { try TraceTimeline(json: "{\"traceEvents\":[") }
        #expect(throws: JSONError.self) { try TraceTimeline(json: "{\"events\":[]}") }
        #expect(throws: JSONError.self) { try JSONValue.parse("[1,]") }
        #expect((try? JSONValue.parse("{\"a\":\"x\\\"\\u00e9\\n\",\"b\":[true,null,-1.5e2]}")) ==
            .object(["a": .string("x\"é\n"), "b": .array([.bool(true), .null, .number(-150)])]))
    }
}
