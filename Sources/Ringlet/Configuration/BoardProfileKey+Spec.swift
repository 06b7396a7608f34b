/// A key's row of the table (`BoardProfileKey.spec`) and the shapes a row takes.
extension BoardProfileKey {
    struct Spec {
        /// The key as written in a profile; a runtime key's is its property's name.
        let name: String
        let kind: Kind
        /// The values the key takes alone (integer keys), or nil when a rule of its own
        /// decides (see `spec`).
        let range: ClosedRange<Int>?
        /// The key accepts `derived`.
        let derived: Bool
        let access: Access

        /// Where the value lives, and how it is read back as a profile spells it.
        enum Access {
            case runtimeInteger(get: (RuntimeConfiguration) -> Int, set: (inout RuntimeConfiguration, Int) -> Void)
            case boardInteger(get: (BoardProfile) -> Int, set: (inout BoardProfile, Int) -> Void)
            case flag(get: (RuntimeConfiguration) -> Bool, set: (inout RuntimeConfiguration, Bool) -> Void)
            case text(get: (BoardProfile) -> String, set: (inout BoardProfile, String) -> Void)
            /// `coreCapacities`, the one list.
            case capacities
        }

        /// An integer property of `RuntimeConfiguration`.
        static func runtime(_ name: String, _ range: ClosedRange<Int>?, derived: Bool = false,
                            _ get: @escaping (RuntimeConfiguration) -> Int,
                            _ set: @escaping (inout RuntimeConfiguration, Int) -> Void) -> Spec {
            Spec(name: name, kind: .integer, range: range, derived: derived, access: .runtimeInteger(get: get, set: set))
        }

        /// An integer fact of the board.
        static func board(_ name: String, _ range: ClosedRange<Int>?, derived: Bool = false,
                          _ get: @escaping (BoardProfile) -> Int,
                          _ set: @escaping (inout BoardProfile, Int) -> Void) -> Spec {
            Spec(name: name, kind: .integer, range: range, derived: derived, access: .boardInteger(get: get, set: set))
        }

        /// A boolean property of `RuntimeConfiguration`.
        static func flag(_ name: String, _ get: @escaping (RuntimeConfiguration) -> Bool,
                         _ set: @escaping (inout RuntimeConfiguration, Bool) -> Void) -> Spec {
            Spec(name: name, kind: .boolean, range: nil, derived: false, access: .flag(get: get, set: set))
        }

        /// A text value, its shape checked by `BoardProfileParser.checkText`.
        static func text(_ name: String, derived: Bool = false, _ get: @escaping (BoardProfile) -> String,
                         _ set: @escaping (inout BoardProfile, String) -> Void) -> Spec {
            Spec(name: name, kind: .text, range: nil, derived: derived, access: .text(get: get, set: set))
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
