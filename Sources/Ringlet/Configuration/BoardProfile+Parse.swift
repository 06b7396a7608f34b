/// Turns profile text into a `BoardProfile`, one step per kind of error:
///
///   1. lines: blank, `# comment`, or `key = value` (malformed line, unknown key, duplicate key)
///   2. values: each converted to its key's kind, in line order (wrong type)
///   3. the profile: defaults, then the file's values (`cores` first: other defaults follow it)
///   4. checks: ranges and contradictions (BoardProfile+Checks.swift)
///
/// Works on bytes, never on Characters or String comparison, so the runtime needs no
/// Unicode tables in Embedded builds and any input — binary, huge, non-UTF-8 — gives
/// a profile or an error, never a trap (BoardProfileFuzzTests).
struct BoardProfileParser {
    /// A value converted to its key's kind.
    enum Value {
        case integer(Int)
        case boolean(Bool)
        case list([Int])
        case text(String)
        /// `derived`: take it from the machine.
        case derived
    }

    let bytes: [UInt8]
    let file: String
    let machine: MachineFacts
    /// The `key = value` lines in file order.
    var entries: [(key: BoardProfileKey, value: ArraySlice<UInt8>, line: Int)] = []
    /// Per key (raw value): the line that set it, 0 when unset.
    var lines = [Int](repeating: 0, count: BoardProfileKey.allCases.count)

    init(bytes: [UInt8], file: String, machine: MachineFacts) {
        self.bytes = bytes
        self.file = file
        self.machine = machine
    }

    mutating func parse() throws(BoardProfileError) -> BoardProfile {
        try readLines()
        var values: [(key: BoardProfileKey, value: Value, line: Int)] = []
        for entry in entries { values.append((entry.key, try convert(entry.value, for: entry.key, line: entry.line), entry.line)) }
        var profile = try defaults(cores: values.first { $0.key == .cores }.map { ($0.value, $0.line) })
        profile.lines = lines
        for entry in values { try assign(entry.value, to: entry.key, line: entry.line, in: &profile) }
        try check(&profile)
        profile.configuration.linkOptionalParts()
        return profile
    }

    func error(_ kind: BoardProfileError.Kind, _ line: Int, _ key: String, _ reason: String) -> BoardProfileError {
        BoardProfileError(kind, file: file, line: line, key: key, reason: reason)
    }

    // MARK: 1. Lines

    private mutating func readLines() throws(BoardProfileError) {
        var start = 0
        var number = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 10 { end += 1 }
            number += 1
            try readLine(bytes[start..<end], number: number)
            start = end + 1
        }
    }

    private mutating func readLine(_ raw: ArraySlice<UInt8>, number: Int) throws(BoardProfileError) {
        var line = raw
        if let hash = line.firstIndex(of: 35) { line = line[line.startIndex..<hash] }  // '#' starts a comment
        line = trimmed(line)
        if line.isEmpty { return }
        if let bad = line.first(where: { $0 < 32 && $0 != 9 || $0 == 127 }) {
            throw error(.malformedLine, number, "", "malformed line: control character \(bad) in it; a profile is "
                + "plain text, one 'key = value' per line")
        }
        guard let equals = line.firstIndex(of: 61) else {  // '='
            throw error(.malformedLine, number, "", "malformed line: expected 'key = value', got '\(excerpt(line))'")
        }
        let name = trimmed(line[line.startIndex..<equals])
        let value = trimmed(line[(equals + 1)...])
        if name.isEmpty {
            throw error(.malformedLine, number, "", "malformed line: no key before '=' in '\(excerpt(line))'")
        }
        guard let key = BoardProfileKey.named(name) else {
            var reason = "unknown key"
            if let near = BoardProfileKey.suggestion(for: name) { reason += "; did you mean '\(near.name)'?" }
            else { reason += "; Boards/README.md lists every key" }
            throw error(.unknownKey, number, excerpt(name), reason)
        }
        if lines[key.rawValue] > 0 {
            throw error(.duplicateKey, number, key.name, "set twice: first on line \(lines[key.rawValue]); keep one")
        }
        lines[key.rawValue] = number
        entries.append((key, value, number))
    }

    private func trimmed(_ slice: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = slice
        while let first = s.first, first == 32 || first == 9 || first == 13 { s = s.dropFirst() }
        while let last = s.last, last == 32 || last == 9 || last == 13 { s = s.dropLast() }
        return s
    }

    /// At most 40 bytes of `slice` as text, for messages.
    func excerpt(_ slice: ArraySlice<UInt8>) -> String {
        let cut = slice.prefix(40)
        return String(decoding: cut, as: UTF8.self) + (slice.count > 40 ? "..." : "")
    }

    // MARK: 2. Values

    private func convert(_ raw: ArraySlice<UInt8>, for key: BoardProfileKey, line: Int) throws(BoardProfileError) -> Value {
        if "derived".utf8.elementsEqual(raw) {
            if key.acceptsDerived { return .derived }
            throw error(.wrongType, line, key.name, "does not accept 'derived': only \(BoardProfileKey.derivedKeyNames) "
                + "come from the machine")
        }
        switch key.kind {
        case .integer:
            return .integer(try integer(raw, key: key, line: line))
        case .boolean:
            if "true".utf8.elementsEqual(raw) { return .boolean(true) }
            if "false".utf8.elementsEqual(raw) { return .boolean(false) }
            throw error(.wrongType, line, key.name, "expects true or false (got '\(excerpt(raw))')")
        case .integerList:
            var list: [Int] = []
            var rest = raw
            while true {
                let comma = rest.firstIndex(of: 44) ?? rest.endIndex
                list.append(try integer(trimmed(rest[rest.startIndex..<comma]), key: key, line: line))
                if comma == rest.endIndex { break }
                rest = rest[(comma + 1)...]
            }
            return .list(list)
        case .text:
            if raw.isEmpty && key != .model {
                throw error(.wrongType, line, key.name, "expects a value (got nothing)")
            }
            return .text(String(decoding: raw, as: UTF8.self))
        }
    }

    /// A decimal integer: optional '-', digits, '_' between digits. Throws
    /// `.wrongType` for anything else and `.outOfRange` past Int's range.
    private func integer(_ raw: ArraySlice<UInt8>, key: BoardProfileKey, line: Int) throws(BoardProfileError) -> Int {
        var digits = raw
        let negative = digits.first == 45  // '-'
        if negative { digits = digits.dropFirst() }
        let what = key.kind == .integerList ? "a comma-separated list of integers" : "an integer"
        guard let first = digits.first, let last = digits.last, first >= 48 && first <= 57, last >= 48 && last <= 57 else {
            throw error(.wrongType, line, key.name, "expects \(what) (got '\(excerpt(raw))')")
        }
        var value = 0
        for byte in digits {
            if byte == 95 { continue }  // '_'
            guard byte >= 48 && byte <= 57 else {
                throw error(.wrongType, line, key.name, "expects \(what) (got '\(excerpt(raw))')")
            }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int(byte - 48))
            if o1 || o2 { throw error(.outOfRange, line, key.name, "'\(excerpt(raw))' is far too large") }
            value = sum
        }
        return negative ? -value : value
    }
}
