/// A board described as data (Architecture, "Boards are data"): the board's cores, memory and
/// cross-compile facts, and the `RuntimeConfiguration` the runtime starts with.
///
/// Profiles are `key = value` text files in `Boards/` (documented in
/// Boards/README.md); the runtime also carries a built-in copy of each, so a binary
/// on a board needs no files. Keys a file leaves out take their defaults (see
/// `origin(of:)`). Parsing checks every key and the contradictions between keys and
/// throws `BoardProfileError` naming the file, the line and the key.
///
///     let profile = try BoardProfile.named("raspberry-pi-zero-2w")
///     try Runtime.start(profile: profile)
public struct BoardProfile: Sendable {
    /// Where a key's value came from.
    public enum Origin: Sendable, Equatable {
        /// Set in the file, on this 1-based line.
        case file(line: Int)
        /// Set to `derived` in the file, on this line: taken from the machine.
        case derived(line: Int)
        /// Not in the file: the default (for machine-derived keys, the machine's value).
        case `default`
    }

    /// The profile as named to the user: a path, or `built-in <board>`.
    public var file: String
    /// The board's name (`board`).
    public var board: String
    /// Substring of /proc/device-tree/model that identifies the board (`model`; "" for none).
    public var model: String
    /// Capacity of each core, 1...1024, as in /sys/devices/system/cpu/cpuN/cpu_capacity
    /// (`coreCapacities`). Unequal capacities mean big.LITTLE: see `placement`.
    public var coreCapacities: [Int]
    /// The board's RAM in MiB (`memoryMegabytes`).
    public var memoryMegabytes: Int
    /// What the runtime may use for thread stacks, the node pool, I/O buffers and
    /// source records (`memoryBudgetBytes`).
    public var memoryBudgetBytes: Int
    /// The kernel's page size, 4096, 16384 or 65536 (`pageBytes`).
    public var pageBytes: Int
    /// The oldest kernel the board's OS ships, as `major.minor` (`minimumKernel`).
    public var minimumKernel: String
    /// The target triple to cross-compile for (`crossTarget`).
    public var crossTarget: String
    /// qemu-system's `-M`, `-cpu` and `-m` values for a board-shaped machine.
    public var qemuMachine: String
    public var qemuCPU: String
    public var qemuMemory: String
    /// The Debian package whose kernel `make sim` boots on that machine (`qemuKernel`),
    /// such as `linux-image-arm64` or `linux-image-6.12-arm64-16k`.
    public var qemuKernel: String
    /// The runtime keys.
    public var configuration: RuntimeConfiguration
    /// Per key (by raw value): the line that set it (0: default), and whether it said `derived`.
    var lines: [Int]
    var derivedKeys: [Bool]

    /// The names of the profiles built into the runtime (the files of `Boards/`).
    public static var builtInNames: [String] { BuiltInBoards.all.map { $0.name } }

    /// Where `key`'s value came from.
    public func origin(of key: BoardProfileKey) -> Origin {
        let line = lines[key.rawValue]
        if derivedKeys[key.rawValue] { return .derived(line: line) }
        return line > 0 ? .file(line: line) : .default
    }

    /// `key`'s value as a profile would spell it.
    public func value(of key: BoardProfileKey) -> String {
        var copy = self
        if let n = copy.configuration.withInteger(key, { $0 }) ?? copy.withInteger(key, { $0 }) { return "\(n)" }
        if let flag = copy.configuration.withFlag(key, { $0 }) { return flag ? "true" : "false" }
        if let text = copy.withText(key, { $0 }) { return text }
        switch key {
        case .backend: return configuration.backend.description
        case .dumpSignal:
            return RuntimeConfiguration.dumpSignals.first { $0.number == configuration.dumpSignal }?.name ?? "off"
        case .trace: return configuration.trace ?? "off"
        default:
            var text = ""
            for (index, capacity) in coreCapacities.enumerated() { text += (index == 0 ? "" : ",") + "\(capacity)" }
            return text
        }
    }

    /// Which cores each worker band runs on, or nil when every core has the same
    /// capacity (then no thread is pinned). See `CorePlacement`.
    public var placement: CorePlacement? { CorePlacement(capacities: coreCapacities) }

    /// The memory the runtime fixes at start under this profile, against the budget.
    public var memoryPlan: MemoryPlan { MemoryPlan(configuration: configuration, budgetBytes: memoryBudgetBytes) }

    // MARK: Loading

    /// Parses profile text. `file` names it in errors; `machine` supplies the values
    /// of keys left out or set to `derived` (tests pass a made-up machine).
    public static func parse(_ text: String, file: String,
                             machine: MachineFacts = .current()) throws(BoardProfileError) -> BoardProfile {
        var parser = BoardProfileParser(bytes: Array(text.utf8), file: file, machine: machine)
        return try parser.parse()
    }

    /// Reads and parses the profile file at `path`. Throws `.unreadable` naming the
    /// path and the errno when it cannot be read, or what it is when it is not a
    /// regular file (a FIFO is refused, never waited on).
    public static func load(path: String, machine: MachineFacts = .current()) throws(BoardProfileError) -> BoardProfile {
        let bytes: [UInt8]
        do throws(MachineFiles.ReadError) {
            bytes = try MachineFiles.read(path: path)
        } catch {
            let reason: String
            switch error {
            case .tooLong(let limit):
                reason = "the profile file is longer than \(limit) bytes; a profile is a short text file"
            case .notRegular(let what):
                reason = "is \(what), not a profile file; give the path of a regular .profile file (Boards/README.md "
                    + "describes them) or the name of a built-in board"
            case .failed(let errno):
                reason = "the profile file cannot be read (\(errno.name)); check the path"
            }
            throw BoardProfileError(.unreadable, file: path, line: 0, key: "", reason: reason)
        }
        var parser = BoardProfileParser(bytes: bytes, file: path, machine: machine)
        return try parser.parse()
    }

    /// The built-in profile called `name` (a file name of `Boards/` without
    /// `.profile`). Throws `.unknownBoard` listing the known names.
    public static func named(_ name: String, machine: MachineFacts = .current()) throws(BoardProfileError) -> BoardProfile {
        guard let entry = BuiltInBoards.all.first(where: { $0.name.utf8.elementsEqual(name.utf8) }) else {
            var known = ""
            for (index, entry) in BuiltInBoards.all.enumerated() { known += (index == 0 ? "" : ", ") + entry.name }
            throw BoardProfileError(.unknownBoard, file: name, line: 0, key: "",
                                    reason: "no built-in board profile is called '\(name)'; known boards: \(known), "
                                        + "or give the path of a .profile file")
        }
        return try parse(entry.text, file: "built-in \(entry.name)", machine: machine)
    }
}

/// The memory a configuration fixes at start (Architecture, "Fixed at start"), term by term.
public struct MemoryPlan: Sendable, Equatable {
    /// Threads with a stack the runtime sizes: workers, reserve and the manager.
    public let threads: Int
    /// Stack of each (a `workerStackBytes` of 0 counts as glibc's usual 8 MiB).
    public let stackBytesPerThread: Int
    /// `workNodes` × the size of a work node.
    public let workNodeBytes: Int
    /// `ioBufferBytes`.
    public let ioBufferBytes: Int
    /// `sources` × `RuntimeConfiguration.bytesPerSource`: the most the source records
    /// take when every allowed source is active (nothing is reserved up front).
    public let sourceBytes: Int
    /// `memoryBudgetBytes`.
    public let budgetBytes: Int

    init(configuration c: RuntimeConfiguration, budgetBytes: Int) {
        threads = c.poolThreads + 1
        stackBytesPerThread = c.workerStackBytes == 0 ? 8 << 20 : c.workerStackBytes
        workNodeBytes = c.workNodes * MemoryLayout<WorkNode>.stride
        ioBufferBytes = c.ioBufferBytes
        sourceBytes = c.sources * RuntimeConfiguration.bytesPerSource
        self.budgetBytes = budgetBytes
    }

    /// Stack address space of every runtime thread.
    public var stackBytes: Int { threads * stackBytesPerThread }
    /// Everything the runtime may use: stacks, node pool, I/O buffers and source records.
    public var totalBytes: Int { stackBytes + workNodeBytes + ioBufferBytes + sourceBytes }
    public var fitsBudget: Bool { totalBytes <= budgetBytes }
}
