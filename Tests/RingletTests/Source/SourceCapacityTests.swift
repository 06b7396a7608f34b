// The `sources` pool (profile key `sources`): at most that many dispatch sources are
// active at once; a finished (cancelled) source gives its place back, and activating
// one too many traps naming the source's queue and the key to raise. Child processes.

import Testing
@testable import Ringlet

@Suite struct SourceCapacityTests {
    @Test func theKeyIsParsedAndValidated() throws {
        let profile = try BoardProfile.parse("sources = 12\n", file: "test.profile", machine: testMachine)
        #expect(profile.configuration.sources == 12 && profile.origin(of: .sources) == .file(line: 1))
        let error = try #require(profileError(["cores = 2", "sources = 0"]))
        #expect(error.kind == .outOfRange && error.line == 2 && error.key == "sources")
    }

    @Test func cancelledSourcesGiveTheirPlaceBack() async {
        await #expect(processExitsWith: .success) { SourceCapacityScenarios.reuse() }
    }

    /// One live source at a time, made, activated and cancelled in a loop from an item
    /// of the queue the sources deliver to (so none can finish before the loop ends):
    /// a cancelled source no longer counts, and the capacity of 3 is never reached.
    @Test func aLoopOfCancelledSourcesStaysWithinTheCapacity() async {
        await #expect(processExitsWith: .success) { SourceCapacityScenarios.loopOfCancelled() }
    }

    @Test func oneSourceTooManyTrapsNamingTheQueueAndTheKey() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            SourceCapacityScenarios.overflow()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("timer source (queue 'test.sources.full') would make 4 active dispatch sources"), "\(text)")
        #expect(text.contains("the board profile key 'sources' allows 3"), "\(text)")
        // What raising it costs.
        #expect(text.contains("each further active source uses about 1024 bytes"), "\(text)")
        #expect(text.contains("'sources' = 6 would allow up to 3072 bytes more"), "\(text)")
    }

    // MARK: The default follows the memory

    @Test func theDerivedBoundFollowsTheMemoryBudget() throws {
        let big = try BoardProfile.named("generic", machine: MachineFacts(onlineCPUs: 8, memoryMegabytes: 24 * 1024))
        #expect(big.configuration.sources == 131_072 && big.configuration.workNodes == 4_194_304)
        let text = try #require(BuiltInBoards.all.first { $0.name == "generic" }).text
        let line = try #require(text.split(separator: "\n", omittingEmptySubsequences: false)
            .firstIndex { $0 == "sources = derived" }) + 1
        #expect(big.origin(of: .sources) == .derived(line: line) && big.memoryPlan.fitsBudget)
        let small = try BoardProfile.named("generic", machine: MachineFacts(onlineCPUs: 4, memoryMegabytes: 512))
        #expect(small.configuration.sources == 4096 && small.configuration.workNodes == 65536)
        #expect(RuntimeConfiguration.derived(cores: 8, memoryMegabytes: 24 * 1024) == big.configuration)
        #expect(RuntimeConfiguration.derived(cores: 4, memoryMegabytes: 512) == small.configuration)
    }

    /// 25,001 timer sources on the generic profile of a 24 GB machine trapped:
    /// "'sources' allows 16384". Dispatch has no such cap; the derived bound grows
    /// with the memory.
    @Test func twentyFiveThousandTimersFitTheGenericProfileOfA24GBMachine() async {
        await #expect(processExitsWith: .success) { SourceCapacityScenarios.manyTimers() }
    }

    /// `bytesPerSource`, which the trap and the memory budget use, is what an active
    /// source costs: resident memory grows by at most that much per source.
    @Test(.enabled(if: !sanitizerActive, "resident memory under a sanitizer counts its shadow memory"))
    func anActiveSourceCostsAtMostBytesPerSource() async {
        await #expect(processExitsWith: .success) { SourceCapacityScenarios.measureBytesPerSource() }
    }
}

enum SourceCapacityScenarios {
    static func start() {
        do { try Runtime.start(configuration: RuntimeConfiguration(cores: 2, sources: 3)) } catch {
            Issue.record("start: \(error)")
        }
    }

    /// Three sources, one cancelled and finished, then a fourth fits.
    static func reuse() {
        start()
        let queue = DispatchQueue(label: "test.sources.reuse")
        let sources = (0..<3).map { _ in DispatchSource.makeUserDataAddSource(queue: queue) }
        sources.forEach { $0.activate() }
        let finished = DispatchSemaphore(value: 0)
        sources[0].setCancelHandler { finished.signal() }
        sources[0].cancel()
        #expect(waited(finished))
        #expect(eventually { RuntimeParts.shared.manager.takeUnretainedValue().activeSources.load(ordering: .relaxed) == 2 })
        let fourth = DispatchSource.makeTimerSource(queue: queue)
        fourth.schedule(deadline: .now() + 60)
        fourth.activate()
        #expect(RuntimeParts.shared.manager.takeUnretainedValue().activeSources.load(ordering: .relaxed) == 3)
        for source in sources.dropFirst() { source.cancel() }
        fourth.cancel()
    }

    static func loopOfCancelled() {
        start()
        let queue = DispatchQueue(label: "test.sources.loop")
        let finished = AtomicCounter()
        let made = 2000
        queue.sync {
            for index in 0..<made {
                let source: DispatchSourceProtocol = index % 2 == 0
                    ? DispatchSource.makeTimerSource(queue: queue) : DispatchSource.makeUserDataAddSource(queue: queue)
                source.setCancelHandler { finished.increment() }
                source.activate()
                source.cancel()
            }
        }
        #expect(eventually { finished.value == made })
        #expect(RuntimeParts.shared.manager.takeUnretainedValue().activeSources.load(ordering: .relaxed) == 0)
    }

    static func overflow() {
        start()
        let queue = DispatchQueue(label: "test.sources.full")
        let sources = (0..<3).map { _ in DispatchSource.makeUserDataOrSource(queue: queue) }
        sources.forEach { $0.activate() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 60)
        timer.activate()  // traps
    }
}

extension SourceCapacityScenarios {
    static func manyTimers() {
        do {
            let machine = MachineFacts(onlineCPUs: 2, memoryMegabytes: 24 * 1024)
            try Runtime.start(profile: BoardProfile.named("generic", machine: machine))
        } catch {
            Issue.record("start: \(error)")
            return
        }
        let queue = DispatchQueue(label: "test.sources.many")
        var timers: [DispatchSourceTimer] = []
        for _ in 0..<25_001 {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + 600)
            timer.activate()
            timers.append(timer)
        }
        #expect(RuntimeParts.shared.manager.takeUnretainedValue().activeSources.load(ordering: .relaxed) == 25_001)
        timers.forEach { $0.cancel() }
    }

    /// Timer sources armed: the manager's and those kept by the bands.
    static func armedTimers(_ manager: ManagerThread) -> Int {
        manager.counters.armedTimers + Runtime.statistics.timersKeptByBands
    }

    /// Resident memory of the process (/proc/self/statm), in bytes.
    static var residentBytes: Int {
        let words = MachineFiles.words(atPath: "/proc/self/statm") ?? []
        return words.count > 1 ? (MachineFiles.decimal(words[1]) ?? 0) * MachineFiles.pageBytes : 0
    }

    static func measureBytesPerSource() {
        startRuntime(RuntimeConfiguration(cores: 2, workNodes: 1 << 20, sources: 1 << 17))
        let queue = DispatchQueue(label: "test.sources.cost")
        var timers: [DispatchSourceTimer] = []
        timers.reserveCapacity(41_000)
        func activate(_ count: Int) {
            for _ in 0..<count {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + 600)
                timer.setEventHandler {}
                timer.activate()
                timers.append(timer)
            }
        }
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        activate(1000)  // the manager's tables and the heap warmed up
        #expect(eventually { armedTimers(manager) >= 1000 })
        // Two batches, the cheaper counted: while the manager lags behind the
        // registrations (a loaded machine), their requests wait in work nodes, and the
        // first batch touches pool pages the second reuses (a fresh-clone run under
        // load read 1,345 bytes a source for one batch of 40,000; 1,165 alone).
        var perSource = Int.max
        for batch in 1...2 {
            let before = residentBytes
            activate(20_000)
            #expect(eventually { armedTimers(manager) >= 1000 + batch * 20_000 })
            perSource = min(perSource, (residentBytes - before) / 20_000)
        }
        #expect(perSource <= RuntimeConfiguration.bytesPerSource * 5 / 4,
                "an active timer source costs \(perSource) bytes, 'bytesPerSource' says \(RuntimeConfiguration.bytesPerSource)")
        timers.forEach { $0.cancel() }
    }
}
