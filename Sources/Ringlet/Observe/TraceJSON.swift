/// The trace file: Chrome's trace event format (JSON object form), which Perfetto's UI
/// (ui.perfetto.dev), chrome://tracing and `ringlet trace` open. Written by hand: the
/// runtime has no Foundation (Architecture, "One OS boundary").
///
///     {"traceEvents":[
///       {"name":"thread_name","ph":"M","pid":4018,"tid":4020,"args":{"name":"worker 0 (high)"}},
///       {"name":"sensor.read","cat":"item","ph":"B","ts":12.345,"pid":4018,"tid":4020,
///        "args":{"queue":"sensor.read","qos":"userInitiated","kind":"block"}},
///       {"name":"sensor.read","cat":"item","ph":"E","ts":20.001,"pid":4018,"tid":4020},
///       {"name":"timer window","cat":"timer","ph":"i","s":"t","ts":30.5,"pid":4018,"tid":4019,
///        "args":{"timers":3}}, ...],
///      "displayTimeUnit":"ns",
///      "otherData":{"droppedEvents":0,"eventsPerThread":16384,"recordedEvents":123}}
///
/// Times are microseconds since the runtime started. A ring that overwrote its oldest
/// events may hold the end of an item whose start it lost: such an "E" is left out
/// (and counted as dropped) so that every "E" closes a "B" of its lane.
enum TraceJSON {
    static func document(lanes: [TraceBuffer], zero: UInt64) -> String {
        let pid = ThreadControl.processID
        var out = "{\"traceEvents\":[\n"
        var first = true
        func emit(_ line: String) {
            if !first { out += ",\n" }
            first = false
            out += line
        }
        emit("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":\(pid),\"tid\":\(pid),\"args\":{\"name\":\"ringlet "
            + "process \(pid)\"}}")
        var labels = QueueLabelCache()
        var dropped = 0
        var recorded = 0
        var capacity = 0
        for lane in lanes.sorted(by: { $0.sortIndex < $1.sortIndex || ($0.sortIndex == $1.sortIndex
                                                                       && $0.threadID < $1.threadID) }) {
            let (events, overwritten) = lane.snapshot()
            capacity = lane.capacity
            recorded += overwritten + events.count
            var laneDropped = overwritten
            let head = "\"pid\":\(pid),\"tid\":\(lane.threadID)"
            var lines: [String] = []
            var depth = 0
            for event in events {
                guard let kind = event.kind else { continue }
                if kind == .finished {
                    if depth == 0 {
                        laneDropped += 1
                        continue
                    }
                    depth -= 1
                } else if kind == .started {
                    depth += 1
                }
                lines.append(line(event, kind, head: head, zero: zero, labels: &labels))
            }
            dropped += laneDropped
            emit("{\"name\":\"thread_name\",\"ph\":\"M\",\(head),\"args\":{\"name\":\(quoted(lane.lane)),"
                + "\"droppedEvents\":\(laneDropped)}}")
            emit("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\(head),\"args\":{\"sort_index\":\(lane.sortIndex)}}")
            for text in lines { emit(text) }
        }
        out += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"droppedEvents\":\(dropped),"
            + "\"eventsPerThread\":\(capacity),\"recordedEvents\":\(recorded)}}\n"
        return out
    }

    /// One event as a JSON object.
    private static func line(_ event: TraceEvent, _ kind: TraceEventKind, head: String, zero: UInt64,
                             labels: inout QueueLabelCache) -> String {
        let ts = "\"ts\":" + microseconds(event.time > zero ? event.time - zero : 0)
        let qos = quoted(event.priority.level.name)
        func instant(_ name: String, _ category: String, _ args: String) -> String {
            "{\"name\":\"\(name)\",\"cat\":\"\(category)\",\"ph\":\"i\",\"s\":\"t\",\(ts),\(head),\"args\":{\(args)}}"
        }
        switch kind {
        case .enqueued:
            let label = quoted(labels.label(UInt32(truncatingIfNeeded: event.subject)))
            return instant("enqueue", "enqueue", "\"queue\":\(label),\"qos\":\(qos)")
        case .started:
            let label = quoted(labels.label(UInt32(truncatingIfNeeded: event.subject)))
            let itemKind = TraceItemKind(rawValue: event.aux) ?? .block
            let category = itemKind == .job ? "job" : "item"
            return "{\"name\":\(label),\"cat\":\"\(category)\",\"ph\":\"B\",\(ts),\(head),\"args\":{\"queue\":\(label),"
                + "\"qos\":\(qos),\"kind\":\"\(itemKind.name)\"}}"
        case .finished:
            return "{\"ph\":\"E\",\(ts),\(head)}"
        case .parked:
            return instant("park", "worker", "")
        case .woke:
            return instant("wake", "worker", "")
        case .managerWoke:
            return instant("manager wake", "manager", "")
        case .timerWindow:
            return instant("timer window", "timer", "\"timers\":\(event.arg)")
        case .sourceEvent:
            let source = TraceSourceKind(rawValue: event.aux) ?? .read
            let subject: String
            switch source {
            case .timer: subject = "\"fired\":\(event.subject)"
            case .signal: subject = "\"signal\":\(event.subject),\"count\":\(event.arg)"
            case .process: subject = "\"pid\":\(event.subject)"
            default: subject = "\"fd\":\(Int64(bitPattern: event.subject))"
            }
            return instant("source event", "source", "\"kind\":\"\(source.name)\",\(subject)")
        case .ioSubmitted:
            return instant(event.aux == 1 ? "io write" : "io read", "io",
                           "\"fd\":\(Int64(bitPattern: event.subject)),\"bytes\":\(event.value)")
        case .ioCompleted:
            return instant("io completed", "io",
                           "\"fd\":\(Int64(bitPattern: event.subject)),\"result\":\(Int64(bitPattern: event.value))")
        case .sleepArmed:
            return instant("sleep", "sleep", "\"delay_us\":\(microseconds(event.value)),\"qos\":\(qos)")
        case .sleepReached:
            return instant("sleep reached", "sleep", "")
        }
    }

    /// Nanoseconds as microseconds with three decimals ("12.345").
    static func microseconds(_ nanoseconds: UInt64) -> String {
        let fraction = nanoseconds % 1000
        let digits = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(nanoseconds / 1000).\(digits)"
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped
    /// (RFC 8259, section 7); other bytes are copied, so UTF-8 stays UTF-8.
    static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = [34]
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case 34: bytes += [92, 34]
            case 92: bytes += [92, 92]
            case 10: bytes += [92, 110]
            case 13: bytes += [92, 114]
            case 9: bytes += [92, 116]
            case 0..<32, 127:
                bytes += [92, 117, 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(34)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Queue labels by queue number, looked up once each while the file is written.
struct QueueLabelCache {
    private var known: [(number: UInt32, label: String)] = []

    mutating func label(_ number: UInt32) -> String {
        if number == 0 { return "Swift concurrency job" }  // its queue is known when it runs
        for entry in known where entry.number == number { return entry.label }
        let label = QueueRegistry.shared.label(ofQueueNumbered: number)?.label ?? "queue #\(number)"
        known.append((number, label))
        return label
    }
}
