/// Board selection for a runtime started on first use (`Runtime.shared` before any
/// `Runtime.start`). Reached only through `rl_first_use_board`
/// (Sources/CRinglet/ringlet_first_use.c), so that a program linked for an explicit
/// start leaves this file, and everything only it reaches, out (the BoardProfiles
/// article, "What a program carries").
extension BoardSelection {
    /// The profile `fromEnvironment()` chooses. A bad RINGLET_BOARD stops the process
    /// with the profile error (file, line, key); a failed detection — only `generic`
    /// on an odd machine can fail — falls back to the derived configuration (nil).
    static func profileForFirstUse() -> BoardProfile? {
        do throws(BoardProfileError) {
            return try fromEnvironment().profile
        } catch {
            if let board = ThreadControl.environment("RINGLET_BOARD"), !board.isEmpty {
                var known = ""
                for name in BoardProfile.builtInNames { known += (known.isEmpty ? "" : ", ") + name }
                ringletMisuse("RINGLET_BOARD=\(board) cannot be used: \(error.description). Fix that line of the profile, set "
                    + "RINGLET_BOARD to a built-in board (\(known)) or a .profile path, or unset it to detect the board "
                    + "(`ringlet board` shows what detection finds)")
            }
            ringletWarning("board detection failed (\(error.description)); starting with RuntimeConfiguration.derived()")
            return nil
        }
    }
}

/// The C side's way into `profileForFirstUse()`: the profile as a retained opaque
/// pointer (`ChosenProfile`), or nil for the derived configuration.
@_cdecl("ringlet_board_for_first_use")
func ringletBoardForFirstUse() -> UnsafeMutableRawPointer? {
    guard let profile = BoardSelection.profileForFirstUse() else { return nil }
    return Unmanaged.passRetained(ChosenProfile(profile)).toOpaque()
}
