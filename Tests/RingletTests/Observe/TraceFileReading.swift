// Reads a trace file the runtime wrote (Chrome's trace event format) for TraceTests.
// Foundation's JSON parser, in a file of its own: with Foundation imported, Dispatch's
// names (which Foundation re-exports) would clash with Ringlet's in the tests.
import Foundation

/// A trace file, parsed, with the counts the tests look at.
struct TraceFileSummary {
    /// Every event object, in file order.
    let events: [[String: Any]]
    let otherData: [String: Any]

    init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let events = object["traceEvents"] as? [[String: Any]] else { return nil }
        self.events = events
        otherData = object["otherData"] as? [String: Any] ?? [:]
    }

    var droppedEvents: Int { otherData["droppedEvents"] as? Int ?? -1 }
    var recordedEvents: Int { otherData["recordedEvents"] as? Int ?? -1 }

    /// The lane names of the "thread_name" metadata events, by tid.
    var laneNames: [Int: String] {
        var names: [Int: String] = [:]
        for event in events where event["ph"] as? String == "M" && event["name"] as? String == "thread_name" {
            if let tid = event["tid"] as? Int, let args = event["args"] as? [String: Any], let name = args["name"] as? String {
                names[tid] = name
            }
        }
        return names
    }

    /// Events of phase `phase` (and name `name`, category `category` when given).
    func events(phase: String, name: String? = nil, category: String? = nil) -> [[String: Any]] {
        events.filter {
            $0["ph"] as? String == phase && (name == nil || $0["name"] as? String == name)
                && (category == nil || $0["cat"] as? String == category)
        }
    }

    func argument(_ event: [String: Any], _ key: String) -> Any? { (event["args"] as? [String: Any])?[key] }

    /// Items that started and finished, as (queue, qos, category), pairing each "E"
    /// with the last open "B" of its thread.
    var finishedItems: [(queue: String, qos: String, category: String)] {
        var open: [Int: [[String: Any]]] = [:]
        var finished: [(String, String, String)] = []
        for event in events {
            guard let tid = event["tid"] as? Int else { continue }
            switch event["ph"] as? String {
            case "B": open[tid, default: []].append(event)
            case "E":
                if let begun = open[tid]?.popLast() {
                    finished.append((argument(begun, "queue") as? String ?? "", argument(begun, "qos") as? String ?? "",
                                     begun["cat"] as? String ?? ""))
                }
            default: break
            }
        }
        return finished
    }

    /// Events other than metadata, per tid.
    var eventsPerLane: [Int: Int] {
        var counts: [Int: Int] = [:]
        for event in events where event["ph"] as? String != "M" {
            if let tid = event["tid"] as? Int { counts[tid, default: 0] += 1 }
        }
        return counts
    }
}
