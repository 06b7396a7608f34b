import ArgumentParser
import BenchSupport
import Foundation

/// `ringlet trace <file.json>`: draws a trace the runtime wrote (the `trace` profile key
/// or RINGLET_TRACE; the Observing article's "The trace timeline") as an SVG timeline —
/// one lane per thread, items as bars coloured by QoS, the manager's timer windows and
/// source events as marks, a time axis. Perfetto's UI (ui.perfetto.dev) opens the same
/// file for a closer look.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Draw a Ringlet trace file (Chrome trace JSON) as an SVG timeline.")

    @Argument(help: "The trace file a program wrote (RINGLET_TRACE=path or the 'trace' profile key).")
    var file: String

    @Option(name: .long, help: ArgumentHelp("Where to write the SVG (default: the file's name with .svg).",
                                            valueName: "file.svg"))
    var output: String?

    func run() throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ValidationError("\(file): cannot read it (no such file, or no permission)")
        }
        let timeline: TraceTimeline
        do {
            timeline = try TraceTimeline(json: String(decoding: data, as: UTF8.self))
        } catch {
            throw ValidationError("\(file): not a Ringlet trace file: \(error)")
        }
        let target = output ?? (file.hasSuffix(".json") ? String(file.dropLast(5)) : file) + ".svg"
        let name = (file as NSString).lastPathComponent
        let svg = TraceChart(title: "Ringlet trace \(name)", timeline: timeline).svg()
        do {
            try svg.write(toFile: target, atomically: true, encoding: .utf8)
        } catch {
            throw ValidationError("\(target): cannot write the SVG: \(error.localizedDescription)")
        }
        print("\(target): \(timeline.lanes.count) lane(s), \(timeline.bars.count) item(s), "
            + "\(timeline.marks.filter { $0.name == "timer window" }.count) timer window(s)"
            + (timeline.droppedEvents > 0 ? ", \(timeline.droppedEvents) event(s) dropped by full rings" : ""))
    }
}
