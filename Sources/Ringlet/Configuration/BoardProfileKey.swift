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
    public enum Kind: Sendable, Equatable {
        /// A decimal integer, optionally negative, `_` allowed between digits.
        case integer
        /// `true` or `false`.
        case boolean
        /// Comma-separated integers, one per core.
        case integerList
        /// The rest of the line (may be empty only for `model`).
        case text
    }

    /// The key's row of the table: its name, how its value is written, its range,
    /// whether it takes `derived`, and where its value lives. Parsing, the range checks
    /// (`RuntimeConfiguration.validate()`), `BoardProfile.value(of:)`, `ringlet board`
    /// and the check of Boards/README.md's key tables (`BoardProfileKeyTableTests`) all
    /// read it, so a key is added here, beside its `RuntimeConfiguration` property.
    ///
    /// Ranges hold for one key alone; rules between keys (`lowQoSWorkers` below the
    /// workers, `workerStackBytes` 0 or a range, `ioBufferBytes` at least a chunk, the
    /// memory budget) are `RuntimeConfiguration.validate()`'s and `BoardProfileParser.check`'s.
    /// `derived` (the `generic` profile): the value comes from the machine — `workNodes`
    /// and `sources` from the memory budget, `mallocArenas` from `cores`, `qemuMachine`
    /// and `qemuKernel` from `crossTarget`'s architecture.
    var spec: Spec {
        switch self {
        case .board: return .text("board", { $0.board }, { $0.board = $1 })
        case .model: return .text("model", { $0.model }, { $0.model = $1 })
        case .coreCapacities: return Spec(name: "coreCapacities", kind: .integerList, range: 1...1024, derived: true, access: .capacities)
        case .memoryMegabytes: return .board("memoryMegabytes", 16...(1 << 22), derived: true, { $0.memoryMegabytes }, { $0.memoryMegabytes = $1 })
        case .memoryBudgetBytes: return .board("memoryBudgetBytes", (1 << 20)...(1 << 42), derived: true, { $0.memoryBudgetBytes }, { $0.memoryBudgetBytes = $1 })
        case .pageBytes: return .board("pageBytes", nil, derived: true, { $0.pageBytes }, { $0.pageBytes = $1 })
        case .minimumKernel: return .text("minimumKernel", { $0.minimumKernel }, { $0.minimumKernel = $1 })
        case .crossTarget: return .text("crossTarget", derived: true, { $0.crossTarget }, { $0.crossTarget = $1 })
        case .qemuMachine: return .text("qemuMachine", derived: true, { $0.qemuMachine }, { $0.qemuMachine = $1 })
        case .qemuCPU: return .text("qemuCPU", { $0.qemuCPU }, { $0.qemuCPU = $1 })
        case .qemuMemory: return .text("qemuMemory", derived: true, { $0.qemuMemory }, { $0.qemuMemory = $1 })
        case .qemuKernel: return .text("qemuKernel", derived: true, { $0.qemuKernel }, { $0.qemuKernel = $1 })
        case .cores: return .runtime("cores", 1...256, derived: true, { $0.cores }, { $0.cores = $1 })
        case .workersPerCore: return .runtime("workersPerCore", 1...16, { $0.workersPerCore }, { $0.workersPerCore = $1 })
        case .reservePerCore: return .runtime("reservePerCore", 0...16, { $0.reservePerCore }, { $0.reservePerCore = $1 })
        case .lowQoSWorkers: return .runtime("lowQoSWorkers", nil, derived: true, { $0.lowQoSWorkers }, { $0.lowQoSWorkers = $1 })
        case .workNodes: return .runtime("workNodes", 64...(1 << 26), derived: true, { $0.workNodes }, { $0.workNodes = $1 })
        case .workerStackBytes: return .runtime("workerStackBytes", nil, { $0.workerStackBytes }, { $0.workerStackBytes = $1 })
        case .utilityNice: return .runtime("utilityNice", 0...19, { $0.utilityNice }, { $0.utilityNice = $1 })
        case .backgroundSchedIdle: return .flag("backgroundSchedIdle", { $0.backgroundSchedIdle }, { $0.backgroundSchedIdle = $1 })
        case .deadlockGraceMilliseconds: return .runtime("deadlockGraceMilliseconds", 10...600_000, { $0.deadlockGraceMilliseconds }, { $0.deadlockGraceMilliseconds = $1 })
        case .mainQueueGraceMilliseconds: return .runtime("mainQueueGraceMilliseconds", 0...600_000, { $0.mainQueueGraceMilliseconds }, { $0.mainQueueGraceMilliseconds = $1 })
        case .descriptorCheckMilliseconds: return .runtime("descriptorCheckMilliseconds", 0...600_000, { $0.descriptorCheckMilliseconds }, { $0.descriptorCheckMilliseconds = $1 })
        case .coverCheckMilliseconds: return .runtime("coverCheckMilliseconds", 0...1000, { $0.coverCheckMilliseconds }, { $0.coverCheckMilliseconds = $1 })
        case .drainBatch: return .runtime("drainBatch", 1...(1 << 20), { $0.drainBatch }, { $0.drainBatch = $1 })
        case .spinMicroseconds: return .runtime("spinMicroseconds", 0...1000, { $0.spinMicroseconds }, { $0.spinMicroseconds = $1 })
        case .ringEntries: return .runtime("ringEntries", 8...4096, { $0.ringEntries }, { $0.ringEntries = $1 })
        case .backgroundLeewayPercent: return .runtime("backgroundLeewayPercent", 0...100, { $0.backgroundLeewayPercent }, { $0.backgroundLeewayPercent = $1 })
        case .backgroundLeewayMaxMilliseconds: return .runtime("backgroundLeewayMaxMilliseconds", 0...60_000, { $0.backgroundLeewayMaxMilliseconds }, { $0.backgroundLeewayMaxMilliseconds = $1 })
        case .utilityLeewayPercent: return .runtime("utilityLeewayPercent", 0...100, { $0.utilityLeewayPercent }, { $0.utilityLeewayPercent = $1 })
        case .utilityLeewayMaxMilliseconds: return .runtime("utilityLeewayMaxMilliseconds", 0...60_000, { $0.utilityLeewayMaxMilliseconds }, { $0.utilityLeewayMaxMilliseconds = $1 })
        case .ioQueueDepth: return .runtime("ioQueueDepth", 1...4096, { $0.ioQueueDepth }, { $0.ioQueueDepth = $1 })
        case .ioChunkBytes: return .runtime("ioChunkBytes", 4096...(16 << 20), { $0.ioChunkBytes }, { $0.ioChunkBytes = $1 })
        case .ioRequests: return .runtime("ioRequests", 8...65536, { $0.ioRequests }, { $0.ioRequests = $1 })
        case .ioBufferBytes: return .runtime("ioBufferBytes", 65536...(1 << 30), { $0.ioBufferBytes }, { $0.ioBufferBytes = $1 })
        case .sources: return .runtime("sources", 1...(1 << 20), derived: true, { $0.sources }, { $0.sources = $1 })
        case .backend: return .text("backend", { $0.configuration.backend.description }, {
                $0.configuration.backend = RuntimeConfiguration.BackendChoice.named($1.utf8) ?? .auto
            })
        case .swiftConcurrency: return .flag("swiftConcurrency", { $0.swiftConcurrency }, { $0.swiftConcurrency = $1 })
        case .dumpSignal: return .text("dumpSignal", { p in
                RuntimeConfiguration.dumpSignals.first { $0.number == p.configuration.dumpSignal }?.name ?? "off"
            }, { p, text in
                p.configuration.storeDumpSignalUnlinked(
                    RuntimeConfiguration.dumpSignals.first { $0.name.utf8.elementsEqual(text.utf8) }?.number ?? 0)
            })
        case .trace: return .text("trace", { $0.configuration.trace ?? "off" }, {
                $0.configuration.storeTraceUnlinked($1.utf8.elementsEqual("off".utf8) ? nil : $1)
            })
        case .traceEvents: return .runtime("traceEvents", 16...(1 << 24), { $0.traceEvents }, { $0.traceEvents = $1 })
        case .mallocArenas: return .runtime("mallocArenas", 0...1024, derived: true, { $0.mallocArenas }, { $0.mallocArenas = $1 })
        }
    }

    /// The key as written in a profile.
    public var name: String { spec.name }
    /// What the key's value is written as.
    public var kind: Kind { spec.kind }
    /// Whether the key also accepts the value `derived`: its default comes from the machine.
    public var acceptsDerived: Bool { spec.derived }
    /// The values the key takes alone, for integer keys with a plain range.
    public var range: ClosedRange<Int>? { spec.range }

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
