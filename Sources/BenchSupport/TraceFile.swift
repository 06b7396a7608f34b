// What `ringlet trace` reads: a trace file the runtime wrote (Chrome's trace event
// format, the Observing article's "The trace timeline"), turned into lanes, item bars
// and marks. A small JSON reader of its own, so this target needs no Foundation.

/// A JSON value (RFC 8259), as much as trace files need.
package enum JSONValue: Equatable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    package var string: String? { if case .string(let text) = self { return text }; return nil }
    package var number: Double? { if case .number(let value) = self { return value }; return nil }
    package var array: [JSONValue]? { if case .array(let values) = self { return values }; return nil }

    /// Parses `text`; the error says where it stopped.
    package static func parse(_ text: String) throws -> JSONValue {
        var reader = JSONReader(bytes: Array(text.utf8))
        reader.skipSpace()
        let value = try reader.value()
        reader.skipSpace()
        if reader.index != reader.bytes.count { throw reader.failure("text after the JSON value") }
        return value
    }
}

package struct JSONError: Error, CustomStringConvertible {
    package let description: String
}

private struct JSONReader {
    let bytes: [UInt8]
    var index = 0

    func failure(_ what: String) -> JSONError { JSONError(description: "JSON: \(what) at byte \(index)") }

    mutating func skipSpace() {
        while index < bytes.count, [32, 9, 10, 13].contains(bytes[index]) { index += 1 }
    }

    mutating func value() throws -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end") }
        switch bytes[index] {
        case 123: return try object()
        case 91: return try array()
        case 34: return .string(try string())
        case 116: try literal("true"); return .bool(true)
        case 102: try literal("false"); return .bool(false)
        case 110: try literal("null"); return .null
        default: return .number(try number())
        }
    }

    mutating func literal(_ word: String) throws {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw failure("expected \(word)")
        }
        index += expected.count
    }

    mutating func object() throws -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == 125 { index += 1; return .object(members) }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == 34 else { throw failure("expected a member name") }
            let key = try string()
            skipSpace()
            guard index < bytes.count, bytes[index] == 58 else { throw failure("expected ':'") }
            index += 1
            skipSpace()
            members[key] = try value()
            skipSpace()
            guard index < bytes.count else { throw failure("unexpected end in an object") }
            if bytes[index] == 44 { index += 1; continue }
            if bytes[index] == 125 { index += 1; return .object(members) }
            throw failure("expected ',' or '}'")
        }
    }

    mutating func array() throws -> JSONValue {
        index += 1
        var values: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == 93 { index += 1; return .array(values) }
        while true {
            skipSpace()
            values.append(try value())
            skipSpace()
            guard index < bytes.count else { throw failure("unexpected end in an array") }
            if bytes[index] == 44 { index += 1; continue }
            if bytes[index] == 93 { index += 1; return .array(values) }
            throw failure("expected ',' or ']'")
        }
    }

    mutating func string() throws -> String {
        index += 1
        var out: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == 34 { return String(decoding: out, as: UTF8.self) }
            if byte != 92 { out.append(byte); continue }
            guard index < bytes.count else { break }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case 110: out.append(10)
            case 116: out.append(9)
            case 114: out.append(13)
            case 98: out.append(8)
            case 102: out.append(12)
            case 117:
                guard bytes.count - index >= 4, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self),
                                                                  radix: 16) else { throw failure("bad \\u escape") }
                index += 4
                out += Array(String(Character(Unicode.Scalar(code) ?? "?")).utf8)
            default: out.append(escaped)
            }
        }
        throw failure("unterminated string")
    }

    mutating func number() throws -> Double {
        let start = index
        while index < bytes.count, (bytes[index] >= 48 && bytes[index] <= 57) || [43, 45, 46, 69, 101].contains(bytes[index]) {
            index += 1
        }
        guard index > start, let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            throw failure("expected a value")
        }
        return value
    }
}

/// A trace as `ringlet trace` draws it: one lane per thread, the items each ran as
/// bars (from their "B"/"E" pairs or "X" events), and the manager's timer windows
/// and source events as marks.
package struct TraceTimeline {
    package struct Lane {
        package let tid: Int
        package var name: String
        package var sortIndex: Int
    }

    package struct Bar {
        package let tid: Int
        package let start: Double
        package let end: Double
        package let label: String
        package let qos: String
    }

    package struct Mark {
        package let tid: Int
        package let time: Double
        /// "timer window" or "source event".
        package let name: String
        package let detail: String
    }

    package var lanes: [Lane] = []
    package var bars: [Bar] = []
    package var marks: [Mark] = []
    /// Events the runtime's rings overwrote (the file's `otherData.droppedEvents`).
    package var droppedEvents = 0

    /// Reads a trace file's text.
    package init(json text: String) throws {
        let document = try JSONValue.parse(text)
        guard let events = document["traceEvents"]?.array else {
            throw JSONError(description: "not a trace: no \"traceEvents\" array")
        }
        droppedEvents = Int(document["otherData"]?["droppedEvents"]?.number ?? 0)
        var open: [Int: [(time: Double, label: String, qos: String)]] = [:]
        var laneIndex: [Int: Int] = [:]
        func lane(_ tid: Int) -> Int {
            if let index = laneIndex[tid] { return index }
            lanes.append(Lane(tid: tid, name: "thread \(tid)", sortIndex: Int.max))
            laneIndex[tid] = lanes.count - 1
            return lanes.count - 1
        }
        var last = 0.0
        for event in events {
            guard let phase = event["ph"]?.string, let tid = event["tid"]?.number.map(Int.init) else { continue }
            let time = event["ts"]?.number ?? 0
            last = max(last, time)
            let name = event["name"]?.string ?? ""
            switch phase {
            case "M":
                // process_name and the like name no lane.
                if name == "thread_name", let text = event["args"]?["name"]?.string { lanes[lane(tid)].name = text }
                if name == "thread_sort_index", let sort = event["args"]?["sort_index"]?.number {
                    lanes[lane(tid)].sortIndex = Int(sort)
                }
            case "B":
                _ = lane(tid)
                open[tid, default: []].append((time, name, event["args"]?["qos"]?.string ?? "unspecified"))
            case "E":
                guard let begun = open[tid]?.popLast() else { continue }
                bars.append(Bar(tid: tid, start: begun.time, end: time, label: begun.label, qos: begun.qos))
            case "X":
                _ = lane(tid)
                bars.append(Bar(tid: tid, start: time, end: time + (event["dur"]?.number ?? 0), label: name,
                                qos: event["args"]?["qos"]?.string ?? "unspecified"))
            case "i", "I":
                _ = lane(tid)
                if name == "timer window" {
                    let timers = Int(event["args"]?["timers"]?.number ?? 0)
                    marks.append(Mark(tid: tid, time: time, name: name, detail: "\(timers) timer(s)"))
                } else if name == "source event" {
                    marks.append(Mark(tid: tid, time: time, name: name, detail: event["args"]?["kind"]?.string ?? ""))
                }
            default:
                continue
            }
        }
        // Items still running when the file was written end at its last event.
        for (tid, stack) in open {
            for begun in stack {
                bars.append(Bar(tid: tid, start: begun.time, end: last, label: begun.label, qos: begun.qos))
            }
        }
        lanes.sort { ($0.sortIndex, $0.tid) < ($1.sortIndex, $1.tid) }
    }

    /// The first and last instant of the trace, in microseconds.
    package var span: (start: Double, end: Double) {
        let times = bars.flatMap { [$0.start, $0.end] } + marks.map(\.time)
        return (times.min() ?? 0, times.max() ?? 0)
    }
}
