// Board profiles: the shipped files parse and validate, the runtime's built-in copies
// equal them, and every kind of error names the exact file, line and key. No kernel
// and no runtime start is needed: parsing takes a made-up machine.

import Foundation
import Testing
@testable import Ringlet

/// A machine for parsing: 4 CPUs, 2 GB, no capacities, no device tree.
let testMachine = MachineFacts(onlineCPUs: 4, memoryMegabytes: 2048)

/// The repository's Boards/ folder.
let boardsDirectory = repositoryDirectory + "/Boards"

/// The repository's top folder: this file is Tests/RingletTests/Configuration/<file>.
let repositoryDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

/// The names of Boards/*.profile.
func shippedProfileNames() -> [String] {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: boardsDirectory)) ?? []
    return files.filter { $0.hasSuffix(".profile") }.map { String($0.dropLast(8)) }.sorted()
}

/// Parses `lines` as test.profile and returns the error it must throw.
func profileError(_ lines: [String], machine: MachineFacts = testMachine) -> BoardProfileError? {
    do {
        _ = try BoardProfile.parse(lines.joined(separator: "\n"), file: "test.profile", machine: machine)
        return nil
    } catch {
        return error
    }
}

@Suite struct BoardProfileTests {
    // MARK: Shipped profiles

    @Test func theShippedBoardsAreTheOnesTheIssueAsksFor() {
        #expect(shippedProfileNames() == ["generic", "orange-pi-5", "raspberry-pi-3b-plus", "raspberry-pi-4",
                                          "raspberry-pi-5", "raspberry-pi-zero-2w", "watch-class", "x86-64-laptop"])
        #expect(BoardProfile.builtInNames.sorted() == shippedProfileNames())
    }

    @Test(arguments: shippedProfileNames())
    func eachShippedProfileParsesValidatesAndSetsEveryKey(_ name: String) throws {
        let profile = try BoardProfile.load(path: "\(boardsDirectory)/\(name).profile", machine: testMachine)
        try profile.configuration.validate()
        #expect(profile.board == name)
        #expect(profile.memoryPlan.fitsBudget)
        #expect(profile.coreCapacities.count == profile.configuration.cores)
        for key in BoardProfileKey.allCases {
            #expect(profile.origin(of: key) != .default, "\(name).profile does not set '\(key.name)'")
        }
    }

    @Test(arguments: shippedProfileNames())
    func theBuiltInCopyEqualsTheFile(_ name: String) throws {
        let file = try String(contentsOfFile: "\(boardsDirectory)/\(name).profile", encoding: .utf8)
        let copy = try #require(BuiltInBoards.all.first { $0.name == name }, "no built-in copy of \(name)")
        #expect(copy.text + "\n" == file, "Boards/\(name).profile changed: run Boards/embed-profiles.sh")
    }

    @Test func theShippedBoardsHaveTheirShapes() throws {
        let zero = try BoardProfile.named("raspberry-pi-zero-2w", machine: testMachine)
        #expect(zero.configuration.cores == 4 && zero.memoryMegabytes == 512 && zero.qemuCPU == "cortex-a53")
        #expect(zero.qemuMemory == "512M" && zero.crossTarget == "aarch64-unknown-linux-gnu" && zero.placement == nil)
        let pi5 = try BoardProfile.named("raspberry-pi-5", machine: testMachine)
        #expect(pi5.pageBytes == 16384 && pi5.qemuCPU == "cortex-a76")
        // make sim boots the 16 KiB-page kernel the Pi 5 needs; the others Debian's default.
        #expect(pi5.qemuKernel == "linux-image-6.12-arm64-16k" && zero.qemuKernel == "linux-image-arm64")
        let orange = try BoardProfile.named("orange-pi-5", machine: testMachine)
        #expect(orange.coreCapacities == [414, 414, 414, 414, 1024, 1024, 1024, 1024])
        #expect(orange.placement == CorePlacement(capacities: orange.coreCapacities))
        #expect(orange.placement?.bigCores == [4, 5, 6, 7] && orange.placement?.smallCores == [0, 1, 2, 3])
        let laptop = try BoardProfile.named("x86-64-laptop", machine: testMachine)
        #expect(laptop.crossTarget == "x86_64-unknown-linux-gnu" && laptop.configuration.cores == 8)
        #expect(laptop.qemuMachine == "q35" && laptop.qemuKernel == "linux-image-amd64")
    }

    @Test func genericIsDerivedFromTheMachine() throws {
        let machine = MachineFacts(onlineCPUs: 3, coreCapacities: [1024, 1024, 1024], memoryMegabytes: 800,
                                   pageBytes: 16384)
        let generic = try BoardProfile.named("generic", machine: machine)
        #expect(generic.configuration == RuntimeConfiguration.derived(cores: 3, memoryMegabytes: 800))
        // The pools follow the budget (200 MiB): a 32nd of it each, rounded down to a power of two.
        #expect(generic.configuration.workNodes == 131_072 && generic.configuration.sources == 4096)
        #expect(generic.memoryMegabytes == 800 && generic.pageBytes == 16384 && generic.qemuMemory == "800M")
        #expect(generic.memoryBudgetBytes == (800 << 20) / 4)
        #expect(generic.origin(of: .cores) == .derived(line: 25))
        // On this machine it is what `RuntimeConfiguration.derived()` was before profiles.
        #expect(try BoardProfile.named("generic").configuration == RuntimeConfiguration.derived())
    }

    @Test func theQemuMachineAndKernelFollowTheTargetWhenDerivedOrLeftOut() throws {
        let arm = try BoardProfile.parse("crossTarget = aarch64-unknown-linux-gnu\n", file: "arm.profile", machine: testMachine)
        #expect(arm.qemuMachine == "virt" && arm.qemuKernel == "linux-image-arm64")
        #expect(arm.origin(of: .qemuKernel) == .default)
        let x86 = try BoardProfile.parse("crossTarget = x86_64-unknown-linux-gnu\nqemuMachine = derived\n"
                                         + "qemuKernel = derived\n", file: "x86.profile", machine: testMachine)
        #expect(x86.qemuMachine == "q35" && x86.qemuKernel == "linux-image-amd64")
        #expect(x86.origin(of: .qemuKernel) == .derived(line: 3))
        let named = try BoardProfile.parse("qemuKernel = linux-image-rt-arm64\n", file: "rt.profile", machine: testMachine)
        #expect(named.qemuKernel == "linux-image-rt-arm64" && named.value(of: .qemuKernel) == "linux-image-rt-arm64")
        // The generic profile follows the machine it is read on.
        let generic = try BoardProfile.named("generic", machine: testMachine)
        #expect(generic.qemuKernel == (MachineFacts.hostTarget.hasPrefix("x86_64") ? "linux-image-amd64" : "linux-image-arm64"))
    }

    @Test func absentKeysTakeTheDefaults() throws {
        let profile = try BoardProfile.parse("# only a comment\n\ncores = 2\n", file: "test.profile", machine: testMachine)
        // The pools follow the memory budget, the other keys take RuntimeConfiguration's defaults.
        #expect(profile.configuration == RuntimeConfiguration.derived(cores: 2, memoryMegabytes: 2048))
        #expect(profile.origin(of: .cores) == .file(line: 3))
        #expect(profile.origin(of: .workNodes) == .default)
        #expect(profile.board == "test" && profile.coreCapacities == [1024, 1024])
        #expect(profile.memoryMegabytes == 2048 && profile.qemuMemory == "2048M")
        let empty = try BoardProfile.parse("", file: "empty.profile", machine: testMachine)
        #expect(empty.configuration == RuntimeConfiguration.derived(cores: 4, memoryMegabytes: 2048))
    }

    /// `mallocArenas` follows `cores` when the file leaves it out or says `derived`.
    @Test func mallocArenasFollowTheCores() throws {
        let absent = try BoardProfile.parse("cores = 3\n", file: "test.profile", machine: testMachine)
        #expect(absent.configuration.mallocArenas == 3)
        let derived = try BoardProfile.parse("cores = 2\nmallocArenas = derived\n", file: "test.profile", machine: testMachine)
        #expect(derived.configuration.mallocArenas == 2 && derived.origin(of: .mallocArenas) == .derived(line: 2))
        let set = try BoardProfile.parse("cores = 2\nmallocArenas = 0\n", file: "test.profile", machine: testMachine)
        #expect(set.configuration.mallocArenas == 0 && set.value(of: .mallocArenas) == "0")
    }

    @Test func valuesMayHaveUnderscoresCommentsAndCarriageReturns() throws {
        let text = "workNodes = 65_536   # a trailing comment\r\nbackgroundSchedIdle = false\r\n\tcores=2\r\n"
        let profile = try BoardProfile.parse(text, file: "test.profile", machine: testMachine)
        #expect(profile.configuration.workNodes == 65536 && !profile.configuration.backgroundSchedIdle)
        #expect(profile.configuration.cores == 2 && profile.value(of: .workNodes) == "65536")
    }

    // MARK: Errors: each names the file, the line and the key

    @Test func unknownKeySuggestsTheNearest() throws {
        let error = try #require(profileError(["cores = 2", "", "workerPerCore = 2"]))
        #expect(error.kind == .unknownKey && error.line == 3 && error.key == "workerPerCore")
        #expect(error.description == "test.profile:3: key 'workerPerCore': unknown key; did you mean 'workersPerCore'?")
        let far = try #require(profileError(["frobnicate = 1"]))
        #expect(far.kind == .unknownKey && far.reason.contains("Boards/README.md"))
    }

    @Test func wrongTypes() throws {
        let cases: [(String, String, String)] = [
            ("cores = four", "cores", "expects an integer (got 'four')"),
            ("backgroundSchedIdle = yes", "backgroundSchedIdle", "expects true or false (got 'yes')"),
            ("coreCapacities = 1024,big", "coreCapacities", "expects a comma-separated list of integers"),
            ("minimumKernel = six", "minimumKernel", "expects a kernel version"),
            ("qemuMemory = lots", "qemuMemory", "expects a size for qemu's -m"),
            ("qemuCPU = cortex a53", "qemuCPU", "expects one word"),
            ("qemuKernel = linux image", "qemuKernel", "expects one word"),
            ("board =", "board", "expects a value (got nothing)"),
            ("drainBatch = derived", "drainBatch", "does not accept 'derived'"),
            ("ringEntries = 1_", "ringEntries", "expects an integer"),
            ("backend = uring", "backend", "expects auto, io_uring or epoll (got 'uring')"),
        ]
        for (line, key, reason) in cases {
            let error = try #require(profileError(["# header", line]), "\(line) was accepted")
            #expect(error.kind == .wrongType && error.line == 2 && error.key == key, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
            #expect(error.description.hasPrefix("test.profile:2: key '\(key)': "), "\(error)")
        }
    }

    @Test func valuesOutOfRangeNameTheLineThatSetThem() throws {
        let cases: [([String], Int, String, String)] = [
            (["utilityNice = 25"], 1, "utilityNice", "must be 0...19 (got 25)"),
            (["cores = 2", "lowQoSWorkers = 4"], 2, "lowQoSWorkers", "must be 1...3"),
            (["cores = 0"], 1, "cores", "must be 1...256 (got 0)"),
            (["cores = 99999999999999999999999"], 1, "cores", "far too large"),
            (["a = 1"].dropFirst() + ["pageBytes = 8192"], 1, "pageBytes", "4096, 16384 or 65536"),
            (["cores = 2", "coreCapacities = 1024,2000"], 2, "coreCapacities", "1...1024"),
            (["memoryMegabytes = 8"], 1, "memoryMegabytes", "must be 16"),
            (["ioChunkBytes = 1048576", "ioBufferBytes = 524288"], 2, "ioBufferBytes", "at least one chunk"),
            (["workNodes = -5"], 1, "workNodes", "got -5"),
            (["mallocArenas = 1025"], 1, "mallocArenas", "must be 0...1024 (got 1025)"),
        ]
        for (lines, line, key, reason) in cases {
            let error = try #require(profileError(lines), "\(lines) was accepted")
            #expect(error.kind == .outOfRange && error.line == line && error.key == key, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
        }
    }

    @Test func aDefaultThatNoLongerFitsIsNamedAsTheDefault() throws {
        // lowQoSWorkers defaults to cores, which one worker per core leaves no room for.
        let error = try #require(profileError(["cores = 2", "workersPerCore = 1"]))
        #expect(error.kind == .outOfRange && error.line == 0 && error.key == "lowQoSWorkers")
        #expect(error.description.hasPrefix("test.profile: key 'lowQoSWorkers' (not set in the file, so its default): "))
    }

    @Test func duplicateKeyNamesBothLines() throws {
        let error = try #require(profileError(["cores = 2", "drainBatch = 8", "cores = 4"]))
        #expect(error.kind == .duplicateKey && error.line == 3 && error.key == "cores")
        #expect(error.reason.contains("first on line 1"))
    }

    @Test func malformedLines() throws {
        for bad in ["cores 4", "= 4", "cores = 2\u{01}"] {
            let error = try #require(profileError(["# ok", "", bad]), "'\(bad)' was accepted")
            #expect(error.kind == .malformedLine && error.line == 3 && error.key == "", "\(error)")
            #expect(error.description.hasPrefix("test.profile:3: malformed line"), "\(error)")
        }
    }

    @Test func contradictions() throws {
        let count = try #require(profileError(["cores = 4", "coreCapacities = 1024,1024"]))
        #expect(count.kind == .contradiction && count.line == 2 && count.key == "coreCapacities")
        #expect(count.reason.contains("2 capacities but 'cores' is 4"))

        let ram = try #require(profileError(["memoryMegabytes = 512", "memoryBudgetBytes = 1073741824"]))
        #expect(ram.kind == .contradiction && ram.line == 2 && ram.key == "memoryBudgetBytes")
        #expect(ram.reason.contains("more than the board's RAM"))

        // 13 threads × 512 KiB + 8192 × 48 + 16 MiB + 512 × 1024 = 24510464 bytes > 16 MiB
        // (the pools follow the 16 MiB budget: a 32nd each).
        let budget = try #require(profileError(["cores = 4", "memoryBudgetBytes = 16777216"]))
        #expect(budget.kind == .contradiction && budget.line == 2 && budget.key == "memoryBudgetBytes")
        for term in ["needs 24510464", "(8 workers + 4 reserve + 1 manager) × 'workerStackBytes' 524288 = 6815744",
                     "'workNodes' 8192 × 48 = 393216", "'ioBufferBytes' = 16777216", "'sources' 512 × 1024 = 524288",
                     "lower 'ioBufferBytes' (the largest term) or raise 'memoryBudgetBytes'"] {
            #expect(budget.reason.contains(term), "\(budget)")
        }
    }

    @Test func unreadableFilesAndUnknownBoards() throws {
        #expect(throws: BoardProfileError.self) { try BoardProfile.load(path: "/nonexistent/x.profile") }
        do {
            _ = try BoardProfile.load(path: "/nonexistent/x.profile", machine: testMachine)
        } catch {
            #expect(error.kind == .unreadable && error.file == "/nonexistent/x.profile")
            #expect(error.description == "/nonexistent/x.profile: the profile file cannot be read (ENOENT); check the path")
        }
        do {
            _ = try BoardProfile.named("raspberry-pi-9", machine: testMachine)
            Issue.record("an unknown board was accepted")
        } catch {
            #expect(error.kind == .unknownBoard && error.reason.contains("raspberry-pi-4"))
        }
    }
}
