/// Why a board profile was refused: the file, the line (1-based; 0 when the problem
/// is not on one line, such as a default value or an unreadable file), the key, and
/// what is wrong with what to do (Architecture, "Boards are data").
public struct BoardProfileError: Error, CustomStringConvertible, Sendable {
    /// The kinds of refusal, so that callers and tests need not parse the message.
    public enum Kind: Sendable, Equatable {
        /// The file could not be read (missing, unreadable, too long).
        case unreadable
        /// `RINGLET_BOARD` or `BoardProfile.named(_:)` names no known board.
        case unknownBoard
        /// A line that is neither blank, a comment, nor `key = value`.
        case malformedLine
        /// A key the runtime does not know (the reason suggests the nearest).
        case unknownKey
        /// The same key set twice (the reason names the first line).
        case duplicateKey
        /// A value of the wrong type: not an integer, boolean or list.
        case wrongType
        /// A value outside the key's range.
        case outOfRange
        /// Values that cannot hold together (memory budget, capacities per core).
        case contradiction
    }

    public let kind: Kind
    /// The profile as named to the user: a path, or `built-in <board>`.
    public let file: String
    /// 1-based line of the file, or 0.
    public let line: Int
    /// The key at fault ("" for malformed lines and unreadable files).
    public let key: String
    /// What is wrong and what to change.
    public let reason: String

    public init(_ kind: Kind, file: String, line: Int, key: String, reason: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.key = key
        self.reason = reason
    }

    /// `file:line: key 'k': reason`, like a compiler diagnostic, so editors can jump to it.
    public var description: String {
        let place = line > 0 ? "\(file):\(line)" : file
        if key.isEmpty { return "\(place): \(reason)" }
        if line > 0 { return "\(place): key '\(key)': \(reason)" }
        return "\(place): key '\(key)' (not set in the file, so its default): \(reason)"
    }
}
