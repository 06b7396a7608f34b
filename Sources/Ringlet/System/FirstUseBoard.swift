import CRinglet

/// The call from a runtime started on first use into board selection, through the C
/// side (Sources/CRinglet/ringlet_first_use.c), so that a program linked for an
/// explicit start carries no selection (the BoardProfiles article, "What a program
/// carries").
enum FirstUseBoard {
    /// What the first-use path learnt.
    enum Choice {
        /// Selection ran: the profile it chose, or nil for `RuntimeConfiguration.derived()`.
        case chosen(BoardProfile?)
        /// The program was linked without board selection.
        case notLinked
    }

    static func choose() -> Choice {
        var pointer: UnsafeMutableRawPointer?
        guard rl_first_use_board(&pointer) != 0 else { return .notLinked }
        guard let pointer else { return .chosen(nil) }
        return .chosen(Unmanaged<ChosenProfile>.fromOpaque(pointer).takeRetainedValue().profile)
    }
}

/// A profile handed across the C boundary (a retained object as an opaque pointer).
final class ChosenProfile {
    let profile: BoardProfile

    init(_ profile: BoardProfile) { self.profile = profile }
}
