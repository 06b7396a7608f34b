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
    case memoryWarningSomePercent, memoryCriticalFullPercent, memoryPressureWindowMilliseconds
    case memoryPressureRecheckMilliseconds, memoryPressurePollMilliseconds
    case serviceMessageBytes

    /// What a key's value is written as.
    public enum Kind: UInt8, Sendable, Equatable {
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
    /// whether it takes `derived`, and the stored property its value lives in. Parsing, the range checks
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
        case .board: return .text("board")
        case .model: return .text("model")
        case .coreCapacities: return .special("coreCapacities", .integerList, 1...1024, derived: true)
        case .memoryMegabytes: return .board("memoryMegabytes", 16...(1 << 22), derived: true)
        case .memoryBudgetBytes: return .board("memoryBudgetBytes", nil, derived: true)
        case .pageBytes: return .board("pageBytes", nil, derived: true)
        case .minimumKernel: return .text("minimumKernel")
        case .crossTarget: return .text("crossTarget", derived: true)
        case .qemuMachine: return .text("qemuMachine", derived: true)
        case .qemuCPU: return .text("qemuCPU")
        case .qemuMemory: return .text("qemuMemory", derived: true)
        case .qemuKernel: return .text("qemuKernel", derived: true)
        case .cores: return .runtime("cores", 1...256, derived: true)
        case .workersPerCore: return .runtime("workersPerCore", 1...16)
        case .reservePerCore: return .runtime("reservePerCore", 0...16)
        case .lowQoSWorkers: return .runtime("lowQoSWorkers", nil, derived: true)
        case .workNodes: return .runtime("workNodes", 64...(1 << 26), derived: true)
        case .workerStackBytes: return .runtime("workerStackBytes", nil)
        case .utilityNice: return .runtime("utilityNice", 0...19)
        case .backgroundSchedIdle: return .flag("backgroundSchedIdle")
        case .deadlockGraceMilliseconds: return .runtime("deadlockGraceMilliseconds", 10...600_000)
        case .mainQueueGraceMilliseconds: return .runtime("mainQueueGraceMilliseconds", 0...600_000)
        case .descriptorCheckMilliseconds: return .runtime("descriptorCheckMilliseconds", 0...600_000)
        case .coverCheckMilliseconds: return .runtime("coverCheckMilliseconds", 0...1000)
        case .drainBatch: return .runtime("drainBatch", 1...(1 << 20))
        case .spinMicroseconds: return .runtime("spinMicroseconds", 0...1000)
        case .ringEntries: return .runtime("ringEntries", 8...4096)
        case .backgroundLeewayPercent: return .runtime("backgroundLeewayPercent", 0...100)
        case .backgroundLeewayMaxMilliseconds: return .runtime("backgroundLeewayMaxMilliseconds", 0...60_000)
        case .utilityLeewayPercent: return .runtime("utilityLeewayPercent", 0...100)
        case .utilityLeewayMaxMilliseconds: return .runtime("utilityLeewayMaxMilliseconds", 0...60_000)
        case .ioQueueDepth: return .runtime("ioQueueDepth", 1...4096)
        case .ioChunkBytes: return .runtime("ioChunkBytes", 4096...(16 << 20))
        case .ioRequests: return .runtime("ioRequests", 8...65536)
        case .ioBufferBytes: return .runtime("ioBufferBytes", 65536...(1 << 30))
        case .sources: return .runtime("sources", 1...(1 << 20), derived: true)
        case .backend: return .special("backend", .text)
        case .swiftConcurrency: return .flag("swiftConcurrency")
        case .dumpSignal: return .special("dumpSignal", .text)
        case .trace: return .special("trace", .text)
        case .traceEvents: return .runtime("traceEvents", 16...(1 << 24))
        case .mallocArenas: return .runtime("mallocArenas", 0...1024, derived: true)
        case .memoryWarningSomePercent: return .runtime("memoryWarningSomePercent", 1...100)
        case .memoryCriticalFullPercent: return .runtime("memoryCriticalFullPercent", 1...100)
        case .memoryPressureWindowMilliseconds: return .runtime("memoryPressureWindowMilliseconds", 500...10_000)
        case .memoryPressureRecheckMilliseconds: return .runtime("memoryPressureRecheckMilliseconds", 100...60_000)
        case .memoryPressurePollMilliseconds: return .runtime("memoryPressurePollMilliseconds", 100...60_000)
        case .serviceMessageBytes: return .runtime("serviceMessageBytes", 1024...(1 << 20))
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

// Where each key's value lives: one case per key, beside its row above (a key whose row
// is `runtime`, `flag`, `board` or `text` has its case in the switch of that shape; the
// compiler names a missing one only through the tests, which read every key back).
// Plain switches, no closures or key paths, so the range check every program runs
// links nothing of the parser's.

extension RuntimeConfiguration {
    /// The stored integer a `runtime` row names, lent to `body`; nil for other keys.
    mutating func withInteger<R>(_ key: BoardProfileKey, _ body: (inout Int) -> R) -> R? {
        switch key {
        case .cores: return body(&cores)
        case .workersPerCore: return body(&workersPerCore)
        case .reservePerCore: return body(&reservePerCore)
        case .lowQoSWorkers: return body(&lowQoSWorkers)
        case .workNodes: return body(&workNodes)
        case .workerStackBytes: return body(&workerStackBytes)
        case .utilityNice: return body(&utilityNice)
        case .deadlockGraceMilliseconds: return body(&deadlockGraceMilliseconds)
        case .mainQueueGraceMilliseconds: return body(&mainQueueGraceMilliseconds)
        case .descriptorCheckMilliseconds: return body(&descriptorCheckMilliseconds)
        case .coverCheckMilliseconds: return body(&coverCheckMilliseconds)
        case .drainBatch: return body(&drainBatch)
        case .spinMicroseconds: return body(&spinMicroseconds)
        case .ringEntries: return body(&ringEntries)
        case .backgroundLeewayPercent: return body(&backgroundLeewayPercent)
        case .backgroundLeewayMaxMilliseconds: return body(&backgroundLeewayMaxMilliseconds)
        case .utilityLeewayPercent: return body(&utilityLeewayPercent)
        case .utilityLeewayMaxMilliseconds: return body(&utilityLeewayMaxMilliseconds)
        case .ioQueueDepth: return body(&ioQueueDepth)
        case .ioChunkBytes: return body(&ioChunkBytes)
        case .ioRequests: return body(&ioRequests)
        case .ioBufferBytes: return body(&ioBufferBytes)
        case .sources: return body(&sources)
        case .traceEvents: return body(&traceEvents)
        case .mallocArenas: return body(&mallocArenas)
        case .memoryWarningSomePercent: return body(&memoryWarningSomePercent)
        case .memoryCriticalFullPercent: return body(&memoryCriticalFullPercent)
        case .memoryPressureWindowMilliseconds: return body(&memoryPressureWindowMilliseconds)
        case .memoryPressureRecheckMilliseconds: return body(&memoryPressureRecheckMilliseconds)
        case .memoryPressurePollMilliseconds: return body(&memoryPressurePollMilliseconds)
        case .serviceMessageBytes: return body(&serviceMessageBytes)
        default: return nil
        }
    }

    /// The stored flag a `flag` row names, lent to `body`; nil for other keys.
    mutating func withFlag<R>(_ key: BoardProfileKey, _ body: (inout Bool) -> R) -> R? {
        switch key {
        case .backgroundSchedIdle: return body(&backgroundSchedIdle)
        case .swiftConcurrency: return body(&swiftConcurrency)
        default: return nil
        }
    }
}

extension BoardProfile {
    /// The board's stored integer a `board` row names, lent to `body`; nil for other keys.
    mutating func withInteger<R>(_ key: BoardProfileKey, _ body: (inout Int) -> R) -> R? {
        switch key {
        case .memoryMegabytes: return body(&memoryMegabytes)
        case .memoryBudgetBytes: return body(&memoryBudgetBytes)
        case .pageBytes: return body(&pageBytes)
        default: return nil
        }
    }

    /// The board's stored text a `text` row names, lent to `body`; nil for other keys.
    mutating func withText<R>(_ key: BoardProfileKey, _ body: (inout String) -> R) -> R? {
        switch key {
        case .board: return body(&board)
        case .model: return body(&model)
        case .minimumKernel: return body(&minimumKernel)
        case .crossTarget: return body(&crossTarget)
        case .qemuMachine: return body(&qemuMachine)
        case .qemuCPU: return body(&qemuCPU)
        case .qemuMemory: return body(&qemuMemory)
        case .qemuKernel: return body(&qemuKernel)
        default: return nil
        }
    }
}
