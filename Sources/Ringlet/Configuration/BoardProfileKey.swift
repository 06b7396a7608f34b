/// Every key a board profile may set: the `RuntimeConfiguration` keys (same names)
/// and the board's own. Boards/README.md documents each one.
///
/// The board keys are read by other tools too (the Makefile's cross and qemu targets
/// read `crossTarget`, `qemuMachine`, `qemuCPU`, `qemuMemory`, `qemuKernel`, `cores`
/// and `coreCapacities` with awk), so their names are fixed.
public enum BoardProfileKey: Int, CaseIterable, Sendable {
    // Board keys.
    case board, model, coreCapacities, memoryMegabytes, memoryBudgetBytes, pageBytes, minimumKernel
    case crossTarget, qemuMachine, qemuCPU, qemuMemory, qemuKernel
    // RuntimeConfiguration keys.
    case cores, workersPerCore, reservePerCore, lowQoSWorkers, workNodes, workerStackBytes, utilityNice
    case backgroundSchedIdle, deadlockGraceMilliseconds, mainQueueGraceMilliseconds, descriptorCheckMilliseconds,
         coverCheckMilliseconds, drainBatch, spinMicroseconds
    case ringEntries
    case backgroundLeewayPercent, backgroundLeewayMaxMilliseconds, utilityLeewayPercent
    case utilityLeewayMaxMilliseconds, ioQueueDepth, ioChunkBytes, ioRequests, ioBufferBytes, sources, backend
    case swiftConcurrency, dumpSignal, trace, traceEvents, mallocArenas

    /// What a key's value is written as.
    public enum Kind: Sendable {
        /// A decimal integer, optionally negative, `_` allowed between digits.
        case integer
        /// `true` or `false`.
        case boolean
        /// Comma-separated integers, one per core.
        case integerList
        /// The rest of the line (may be empty only for `model`).
        case text
    }

    /// The key as written in a profile.
    public var name: String {
        switch self {
        case .board: return "board"
        case .model: return "model"
        case .coreCapacities: return "coreCapacities"
        case .memoryMegabytes: return "memoryMegabytes"
        case .memoryBudgetBytes: return "memoryBudgetBytes"
        case .pageBytes: return "pageBytes"
        case .minimumKernel: return "minimumKernel"
        case .crossTarget: return "crossTarget"
        case .qemuMachine: return "qemuMachine"
        case .qemuCPU: return "qemuCPU"
        case .qemuMemory: return "qemuMemory"
        case .qemuKernel: return "qemuKernel"
        case .cores: return "cores"
        case .workersPerCore: return "workersPerCore"
        case .reservePerCore: return "reservePerCore"
        case .lowQoSWorkers: return "lowQoSWorkers"
        case .workNodes: return "workNodes"
        case .workerStackBytes: return "workerStackBytes"
        case .utilityNice: return "utilityNice"
        case .backgroundSchedIdle: return "backgroundSchedIdle"
        case .deadlockGraceMilliseconds: return "deadlockGraceMilliseconds"
        case .mainQueueGraceMilliseconds: return "mainQueueGraceMilliseconds"
        case .descriptorCheckMilliseconds: return "descriptorCheckMilliseconds"
        case .coverCheckMilliseconds: return "coverCheckMilliseconds"
        case .drainBatch: return "drainBatch"
        case .spinMicroseconds: return "spinMicroseconds"
        case .ringEntries: return "ringEntries"
        case .backgroundLeewayPercent: return "backgroundLeewayPercent"
        case .backgroundLeewayMaxMilliseconds: return "backgroundLeewayMaxMilliseconds"
        case .utilityLeewayPercent: return "utilityLeewayPercent"
        case .utilityLeewayMaxMilliseconds: return "utilityLeewayMaxMilliseconds"
        case .ioQueueDepth: return "ioQueueDepth"
        case .ioChunkBytes: return "ioChunkBytes"
        case .ioRequests: return "ioRequests"
        case .ioBufferBytes: return "ioBufferBytes"
        case .sources: return "sources"
        case .backend: return "backend"
        case .swiftConcurrency: return "swiftConcurrency"
        case .dumpSignal: return "dumpSignal"
        case .trace: return "trace"
        case .traceEvents: return "traceEvents"
        case .mallocArenas: return "mallocArenas"
        }
    }

    public var kind: Kind {
        switch self {
        case .board, .model, .minimumKernel, .crossTarget, .qemuMachine, .qemuCPU, .qemuMemory, .qemuKernel, .backend,
             .dumpSignal, .trace:
            return .text
        case .coreCapacities: return .integerList
        case .backgroundSchedIdle, .swiftConcurrency: return .boolean
        default: return .integer
        }
    }

    /// Keys whose default comes from the machine also accept the value `derived`,
    /// which says so explicitly (the `generic` profile uses it). `workNodes` and
    /// `sources` follow the memory budget (`RuntimeConfiguration.derivedWorkNodes`),
    /// `mallocArenas` follows `cores`;
    /// `qemuMachine` and `qemuKernel` follow `crossTarget`'s architecture.
    public var acceptsDerived: Bool {
        switch self {
        case .cores, .lowQoSWorkers, .coreCapacities, .memoryMegabytes, .memoryBudgetBytes, .pageBytes, .crossTarget,
             .qemuMachine, .qemuMemory, .qemuKernel, .workNodes, .sources, .mallocArenas:
            return true
        default:
            return false
        }
    }

    /// Whether this key belongs to `RuntimeConfiguration` (else it describes the board).
    public var isRuntimeKey: Bool { rawValue >= BoardProfileKey.cores.rawValue }

    /// The key spelled exactly as `bytes`, or nil. Bytes, not String comparison, so
    /// that Embedded builds need no Unicode tables.
    static func named(_ bytes: ArraySlice<UInt8>) -> BoardProfileKey? {
        for key in allCases where key.name.utf8.elementsEqual(bytes) { return key }
        return nil
    }

    /// The key that `runtimeKey` (as `RuntimeConfiguration.validate()` names it) is.
    static func named(_ runtimeKey: String) -> BoardProfileKey? {
        named(ArraySlice(runtimeKey.utf8))
    }

    /// The known key nearest to a misspelt one (at most a third of its letters
    /// edited, case ignored), for "did you mean" in errors.
    static func suggestion(for bytes: ArraySlice<UInt8>) -> BoardProfileKey? {
        var best: (key: BoardProfileKey, distance: Int)?
        for key in allCases {
            let distance = editDistance(Array(key.name.utf8), Array(bytes))
            if distance <= max(2, key.name.utf8.count / 3), distance < (best?.distance ?? Int.max) {
                best = (key, distance)
            }
        }
        return best?.key
    }

    /// Levenshtein distance over ASCII-lowercased bytes (two rows).
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if b.count > 256 { return Int.max }
        func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            current[0] = i
            for j in 1..<(b.count + 1) {
                let cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
