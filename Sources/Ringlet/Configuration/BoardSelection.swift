/// How the runtime chooses its board profile when none is given through the API
/// (`Runtime.start(profile:)`), in order:
///
///   1. `RINGLET_BOARD=<name or path>`: a path (it contains '/' or ends in `.profile`)
///      is read; a name is looked up as `$RINGLET_BOARDS_DIR/<name>.profile` when
///      RINGLET_BOARDS_DIR is set, else among the built-in copies of Boards/.
///   2. Detection: the built-in profile whose `model` is the longest substring of
///      /proc/device-tree/model; else, on a big.LITTLE machine (unequal sysfs
///      `cpu_capacity`), the one profile whose `coreCapacities` match within 10%.
///   3. `generic`: derived from the machine.
///
/// `reason` says which step chose and what matched, for `ringlet board`.
public struct BoardSelection: Sendable {
    /// The profile in force.
    public let profile: BoardProfile
    /// Why this profile: the variable, the model or capacities that matched, or "no match".
    public let reason: String

    /// Step 1, else 2 and 3, reading the environment. Throws the profile's error
    /// when RINGLET_BOARD names a bad or unknown profile.
    public static func fromEnvironment(machine: MachineFacts = .current()) throws(BoardProfileError) -> BoardSelection {
        try choose(board: ThreadControl.environment("RINGLET_BOARD"),
                   boardsDirectory: ThreadControl.environment("RINGLET_BOARDS_DIR"), machine: machine)
    }

    /// The same with the variables' values given (nil: unset).
    public static func choose(board: String?, boardsDirectory: String?,
                              machine: MachineFacts) throws(BoardProfileError) -> BoardSelection {
        guard let board, !board.isEmpty else { return try detect(machine: machine) }
        let bytes = Array(board.utf8)
        if bytes.contains(47) || (bytes.count > 8 && bytes.suffix(8).elementsEqual(".profile".utf8)) {
            return BoardSelection(profile: try BoardProfile.load(path: board, machine: machine),
                                  reason: "RINGLET_BOARD=\(board) (a profile file)")
        }
        if let boardsDirectory, !boardsDirectory.isEmpty {
            let path = boardsDirectory + "/" + board + ".profile"
            return BoardSelection(profile: try BoardProfile.load(path: path, machine: machine),
                                  reason: "RINGLET_BOARD=\(board), read from RINGLET_BOARDS_DIR as \(path)")
        }
        return BoardSelection(profile: try BoardProfile.named(board, machine: machine),
                              reason: "RINGLET_BOARD=\(board) (the built-in copy of Boards/\(board).profile)")
    }

    /// Steps 2 and 3: the device-tree model, then big.LITTLE capacities, then generic.
    public static func detect(machine: MachineFacts) throws(BoardProfileError) -> BoardSelection {
        let model = Array(machine.deviceTreeModel.utf8)
        var best: (board: BuiltInBoard, profile: BoardProfile)?
        for board in BuiltInBoards.all {
            let profile = try BoardProfile.named(board.name, machine: machine)
            let wanted = Array(profile.model.utf8)
            if wanted.isEmpty || !contains(model, wanted) { continue }
            if best == nil || wanted.count > best!.profile.model.utf8.count { best = (board, profile) }
        }
        if let best {
            return BoardSelection(profile: best.profile, reason: "/proc/device-tree/model '\(machine.deviceTreeModel)' "
                + "contains '\(best.profile.model)', the model of built-in \(best.board.name)")
        }
        let capacities = CorePlacement.commaSeparated(machine.coreCapacities)
        if CorePlacement(capacities: machine.coreCapacities) != nil {
            var matches: [BoardProfile] = []
            for board in BuiltInBoards.all {
                let profile = try BoardProfile.named(board.name, machine: machine)
                if !profile.derivedKeys[BoardProfileKey.coreCapacities.rawValue],
                   close(profile.coreCapacities, machine.coreCapacities) { matches.append(profile) }
            }
            if matches.count == 1 {
                return BoardSelection(profile: matches[0], reason: "sysfs cpu_capacity \(capacities) matches the "
                    + "coreCapacities of built-in \(matches[0].board) (no device-tree model matched)")
            }
        }
        let modelText = model.isEmpty ? "there is no /proc/device-tree/model"
            : "/proc/device-tree/model '\(machine.deviceTreeModel)' matches no profile's model"
        let capacityNote = machine.coreCapacities.isEmpty ? "sysfs reports no cpu_capacity"
            : "cpu_capacity \(capacities) identifies no big.LITTLE board"
        return BoardSelection(profile: try BoardProfile.named("generic", machine: machine),
                              reason: "no board detected (\(modelText); \(capacityNote)): generic, derived from "
                                  + "this machine")
    }

    /// Whether `needle` occurs in `haystack` (bytes; device-tree models are ASCII).
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        if needle.count > haystack.count { return false }
        for start in 0...(haystack.count - needle.count)
            where haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        return false
    }

    /// Same count, each within 10% (sysfs capacities vary a little between kernels).
    private static func close(_ a: [Int], _ b: [Int]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) * 10 <= max($0, $1) }
    }
}
