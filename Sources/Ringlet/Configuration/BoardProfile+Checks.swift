/// Steps 3 and 4 of `BoardProfileParser`: the defaults, the file's values on top,
/// then every range and the contradictions between keys, each reported on the line
/// that set the key at fault.
extension BoardProfileParser {
    /// The profile before the file's values: defaults, with `cores` resolved first
    /// because `coreCapacities` and `lowQoSWorkers` default from it.
    func defaults(cores setting: (Value, Int)?) throws(BoardProfileError) -> BoardProfile {
        var cores = machine.onlineCPUs
        if let (value, line) = setting, case .integer(let n) = value {
            // Checked here, before anything is sized by it.
            guard n >= 1 && n <= 256 else { throw error(.outOfRange, line, "cores", "must be 1...256 (got \(n))") }
            cores = n
        }
        let capacities = machine.coreCapacities.count == cores
            ? machine.coreCapacities : [Int](repeating: 1024, count: cores)
        let memory = machine.memoryMegabytes
        return BoardProfile(
            file: file, board: stem(of: file), model: "", coreCapacities: capacities, memoryMegabytes: memory,
            memoryBudgetBytes: RuntimeConfiguration.derivedBudget(memoryMegabytes: memory), pageBytes: machine.pageBytes,
            minimumKernel: "5.10", crossTarget: MachineFacts.hostTarget, qemuMachine: "virt", qemuCPU: "max",
            qemuMemory: "\(memory)M", qemuKernel: "", configuration: RuntimeConfiguration(cores: cores),
            lines: lines, derivedKeys: [Bool](repeating: false, count: BoardProfileKey.allCases.count))
    }

    /// `raspberry-pi-4` for `Boards/raspberry-pi-4.profile` and `built-in raspberry-pi-4`.
    private func stem(of file: String) -> String {
        var name = Array(file.utf8)
        if let slash = name.lastIndex(of: 47) { name = Array(name[(slash + 1)...]) }
        if let space = name.lastIndex(of: 32) { name = Array(name[(space + 1)...]) }
        if name.count > 8 && name.suffix(8).elementsEqual(".profile".utf8) { name.removeLast(8) }
        return String(decoding: name, as: UTF8.self)
    }

    /// Puts one value of the file into the profile, in the property the key's row
    /// names; `derived` keeps the machine's value. A board key's range is checked here,
    /// a runtime key's by `RuntimeConfiguration.validate()` in `check`.
    func assign(_ value: Value, to key: BoardProfileKey, line: Int, in p: inout BoardProfile) throws(BoardProfileError) {
        let spec = key.spec
        switch (value, spec.place) {
        case (.derived, _):
            p.derivedKeys[key.rawValue] = true
        case (.boolean(let flag), .runtime):
            p.configuration.withFlag(key) { $0 = flag }
        case (.integer(let n), .runtime):
            p.configuration.withInteger(key) { $0 = n }  // `cores` was checked in defaults(cores:)
        case (.integer(let n), .board):
            if let range = spec.range, !range.contains(n) {
                throw error(.outOfRange, line, key.name, "must be \(range.lowerBound)...\(range.upperBound) (got \(n))")
            }
            if key == .pageBytes && n != 4096 && n != 16384 && n != 65536 {
                throw error(.outOfRange, line, key.name, "must be 4096, 16384 or 65536 (got \(n))")
            }
            if key == .memoryBudgetBytes && (n < 1 << 20 || n > 1 << 42) {
                throw error(.outOfRange, line, key.name, "must be 1048576...4398046511104 (got \(n))")
            }
            p.withInteger(key) { $0 = n }
        case (.text(let text), .board):
            try checkText(text, key: key, line: line)
            p.withText(key) { $0 = text }
        case (.list(let list), .special):
            for capacity in list where capacity < 1 || capacity > 1024 {
                throw error(.outOfRange, line, key.name, "each capacity must be 1...1024, the kernel's scale where "
                    + "the biggest core is 1024 (got \(capacity))")
            }
            p.coreCapacities = list
        case (.text(let text), .special):
            try checkText(text, key: key, line: line)
            switch key {
            case .backend: p.configuration.backend = RuntimeConfiguration.BackendChoice.named(text.utf8) ?? .auto
            case .dumpSignal:
                p.configuration.storeDumpSignalUnlinked(
                    RuntimeConfiguration.dumpSignals.first { $0.name.utf8.elementsEqual(text.utf8) }?.number ?? 0)
            default: p.configuration.storeTraceUnlinked(text.utf8.elementsEqual("off".utf8) ? nil : text)
            }
        default:
            ringletBug("profile key '\(key.name)' parsed as a value of another kind")
        }
    }

    /// Ranges (`RuntimeConfiguration.validate()`, mapped to the line that set the key)
    /// and contradictions: capacities per core, budget within RAM, memory within budget.
    func check(_ p: inout BoardProfile) throws(BoardProfileError) {
        // Keys that follow the RAM when the file leaves them to the machine.
        if case .default = p.origin(of: .memoryBudgetBytes) {
            p.memoryBudgetBytes = RuntimeConfiguration.derivedBudget(memoryMegabytes: p.memoryMegabytes)
        } else if case .derived = p.origin(of: .memoryBudgetBytes) {
            p.memoryBudgetBytes = RuntimeConfiguration.derivedBudget(memoryMegabytes: p.memoryMegabytes)
        }
        if lines[BoardProfileKey.qemuMemory.rawValue] == 0 || p.derivedKeys[BoardProfileKey.qemuMemory.rawValue] {
            p.qemuMemory = "\(p.memoryMegabytes)M"
        }
        // qemu's machine and Debian's kernel follow the target's architecture.
        let x86 = p.crossTarget.utf8.starts(with: "x86_64".utf8)
        if lines[BoardProfileKey.qemuMachine.rawValue] == 0 || p.derivedKeys[BoardProfileKey.qemuMachine.rawValue] {
            p.qemuMachine = x86 ? "q35" : "virt"
        }
        if lines[BoardProfileKey.qemuKernel.rawValue] == 0 || p.derivedKeys[BoardProfileKey.qemuKernel.rawValue] {
            p.qemuKernel = x86 ? "linux-image-amd64" : "linux-image-arm64"
        }
        // The pools follow the budget, whether the machine's or the file's.
        if lines[BoardProfileKey.workNodes.rawValue] == 0 || p.derivedKeys[BoardProfileKey.workNodes.rawValue] {
            p.configuration.workNodes = RuntimeConfiguration.derivedWorkNodes(budgetBytes: p.memoryBudgetBytes)
        }
        if lines[BoardProfileKey.sources.rawValue] == 0 || p.derivedKeys[BoardProfileKey.sources.rawValue] {
            p.configuration.sources = RuntimeConfiguration.derivedSources(budgetBytes: p.memoryBudgetBytes)
        }
        do throws(RuntimeError) {
            try p.configuration.validate()
        } catch {
            guard case .invalidConfiguration(let name, let reason) = error else { ringletBug("validate() threw \(error.description)") }
            let line = BoardProfileKey.named(name).map { lines[$0.rawValue] } ?? 0
            throw self.error(.outOfRange, line, name, reason)
        }
        let cores = p.configuration.cores
        if p.coreCapacities.count != cores {
            throw error(.contradiction, lines[BoardProfileKey.coreCapacities.rawValue], "coreCapacities",
                        "lists \(p.coreCapacities.count) capacities but 'cores' is \(cores); give one per core")
        }
        if p.memoryBudgetBytes > p.memoryMegabytes << 20 {
            throw error(.contradiction, lineOf(.memoryBudgetBytes, else: .memoryMegabytes), "memoryBudgetBytes",
                        "is \(p.memoryBudgetBytes) bytes, more than the board's RAM ('memoryMegabytes' = "
                            + "\(p.memoryMegabytes), \(p.memoryMegabytes << 20) bytes); lower it")
        }
        let plan = p.memoryPlan
        if !plan.fitsBudget {
            let c = p.configuration
            let terms: [(BoardProfileKey, Int)] = [(.workerStackBytes, plan.stackBytes), (.workNodes, plan.workNodeBytes),
                                                   (.ioBufferBytes, plan.ioBufferBytes), (.sources, plan.sourceBytes)]
            var largest = terms[0]
            for term in terms where term.1 > largest.1 { largest = term }
            let line = lines[BoardProfileKey.memoryBudgetBytes.rawValue] > 0
                ? lines[BoardProfileKey.memoryBudgetBytes.rawValue] : lines[largest.0.rawValue]
            throw error(.contradiction, line, "memoryBudgetBytes",
                        "is \(p.memoryBudgetBytes) bytes but the runtime needs \(plan.totalBytes): stacks "
                            + "(\(c.workers) workers + \(c.reserve) reserve + 1 manager) × 'workerStackBytes' "
                            + "\(plan.stackBytesPerThread) = \(plan.stackBytes), node pool 'workNodes' \(c.workNodes) × "
                            + "\(MemoryLayout<WorkNode>.stride) = \(plan.workNodeBytes), I/O buffers 'ioBufferBytes' = "
                            + "\(plan.ioBufferBytes), source records 'sources' \(c.sources) × "
                            + "\(RuntimeConfiguration.bytesPerSource) = \(plan.sourceBytes); lower '\(largest.0.name)' "
                            + "(the largest term) or raise 'memoryBudgetBytes'")
        }
    }

    /// The line that set `key`, else the one that set `other`, else 0.
    private func lineOf(_ key: BoardProfileKey, else other: BoardProfileKey) -> Int {
        lines[key.rawValue] > 0 ? lines[key.rawValue] : lines[other.rawValue]
    }

    /// Shapes of the text keys: names without spaces, `major.minor`, qemu's `512M`.
    private func checkText(_ text: String, key: BoardProfileKey, line: Int) throws(BoardProfileError) {
        let bytes = Array(text.utf8)
        let isDigit = { (byte: UInt8) in byte >= 48 && byte <= 57 }
        switch key {
        case .model:
            return
        case .minimumKernel:
            let parts = bytes.split(separator: 46, omittingEmptySubsequences: false)  // '.'
            if parts.count == 2 && parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(isDigit) }) { return }
            throw error(.wrongType, line, key.name, "expects a kernel version major.minor such as 6.1 (got '\(text)')")
        case .dumpSignal:
            if bytes.elementsEqual("off".utf8)
                || RuntimeConfiguration.dumpSignals.contains(where: { $0.name.utf8.elementsEqual(bytes) }) { return }
            throw error(.wrongType, line, key.name, "expects off, SIGQUIT, SIGUSR1 or SIGUSR2: the signal that makes "
                + "the runtime write its dump (got '\(text)')")
        case .qemuMemory:
            if bytes.count >= 2 && bytes.count <= 8, let unit = bytes.last, unit == 77 || unit == 71,  // 'M' 'G'
               bytes.dropLast().allSatisfy(isDigit) { return }
            throw error(.wrongType, line, key.name, "expects a size for qemu's -m such as 512M or 2G (got '\(text)')")
        case .backend:
            if RuntimeConfiguration.BackendChoice.named(bytes) != nil { return }
            throw error(.wrongType, line, key.name, "expects auto, io_uring or epoll (got '\(text)')")
        default:
            if bytes.allSatisfy({ $0 > 32 && $0 < 127 }) { return }
            throw error(.wrongType, line, key.name, "expects one word of printable ASCII, no spaces (got '\(text)')")
        }
    }
}
