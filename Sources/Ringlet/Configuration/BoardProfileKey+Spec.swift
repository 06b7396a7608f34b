/// A key's row of the table (`BoardProfileKey.spec`) and the shapes a row takes.
///
/// A row is plain data, so the range check every program runs reads the table without
/// linking any code of the parser's. Its value is one stored integer, flag or text of
/// `RuntimeConfiguration` or `BoardProfile`, reached through the switch of its shape
/// (`withInteger`, `withFlag`, `withText`, beside the table); the few keys whose value is
/// not (`coreCapacities`, `backend`, `dumpSignal`, `trace`) are `special`, written by the
/// parser and spelled by `BoardProfile.value(of:)` themselves.
extension BoardProfileKey {
    /// Small trivial fields only, so that the rows fold into constant tables (every
    /// program carries them: the range check reads them).
    struct Spec {
        /// The key as written in a profile (a runtime key's is its property's name):
        /// the literal's bytes and their count.
        let spelling: UnsafePointer<UInt8>
        let length: UInt8
        /// The values the key takes alone (integer keys), `low...high`; none when
        /// `low > high` (a rule of its own decides, see `spec`). 32 bits keep the table
        /// small; a key whose range does not fit has a rule of its own.
        let low: Int32, high: Int32
        /// The kind, the place and `derived`, in one byte.
        private let traits: UInt8

        @inline(__always)
        init(_ spelling: StaticString, _ kind: Kind, _ range: ClosedRange<Int>?, derived: Bool, place: Place) {
            self.spelling = spelling.utf8Start
            length = UInt8(truncatingIfNeeded: spelling.utf8CodeUnitCount)
            (low, high) = range.map { (Int32($0.lowerBound), Int32($0.upperBound)) } ?? (1, 0)
            traits = kind.rawValue | place.rawValue << 2 | (derived ? 16 : 0)
        }

        var kind: Kind { Kind(rawValue: traits & 3).unsafelyUnwrapped }
        var place: Place { Place(rawValue: traits >> 2 & 3).unsafelyUnwrapped }
        /// The key accepts `derived`.
        var derived: Bool { traits & 16 != 0 }
        var range: ClosedRange<Int>? { low <= high ? Int(low)...Int(high) : nil }
        var name: String { String(decoding: UnsafeBufferPointer(start: spelling, count: Int(length)), as: UTF8.self) }

        /// Where the value lives: a stored property of `RuntimeConfiguration` or of
        /// `BoardProfile` of the key's kind (`Int`, `Bool`, `String`), or neither.
        enum Place: UInt8 {
            case runtime
            case board
            case special
        }

        @inline(__always)
        static func runtime(_ name: StaticString, _ range: ClosedRange<Int>?, derived: Bool = false) -> Spec {
            Spec(name, .integer, range, derived: derived, place: .runtime)
        }

        @inline(__always)
        static func flag(_ name: StaticString) -> Spec {
            Spec(name, .boolean, nil, derived: false, place: .runtime)
        }

        @inline(__always)
        static func board(_ name: StaticString, _ range: ClosedRange<Int>?, derived: Bool = false) -> Spec {
            Spec(name, .integer, range, derived: derived, place: .board)
        }

        /// A text value, its shape checked by `BoardProfileParser.checkText`.
        @inline(__always)
        static func text(_ name: StaticString, derived: Bool = false) -> Spec {
            Spec(name, .text, nil, derived: derived, place: .board)
        }

        /// A value the parser writes and `BoardProfile.value(of:)` spells itself.
        @inline(__always)
        static func special(_ name: StaticString, _ kind: Kind, _ range: ClosedRange<Int>? = nil,
                            derived: Bool = false) -> Spec {
            Spec(name, kind, range, derived: derived, place: .special)
        }
    }

    /// The keys that accept `derived`, for the error that refuses it elsewhere.
    static var derivedKeyNames: String {
        var text = ""
        let keys = allCases.filter { $0.acceptsDerived }
        for (index, key) in keys.enumerated() {
            text += (index == 0 ? "" : index == keys.count - 1 ? " and " : ", ") + key.name
        }
        return text
    }
}
