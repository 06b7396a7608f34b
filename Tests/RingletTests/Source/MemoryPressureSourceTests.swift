// DispatchSource.makeMemoryPressureSource: PSI's pressure file and triggers
// (Source/MemoryPressureWatch.swift, System/PressureFiles.swift). A real squeeze where
// the machine allows one (root and a cgroup v1 memory controller: a cgroup with a small
// limit, memory held, a file read again and again), the trigger's refusal and PSI's
// absence through the fault hooks. Each scenario runs in a child process with its own
// runtime, whose thresholds it sets.

import CRingletTestSupport
import Glibc
import Synchronization
import Testing
@testable import Ringlet

@Suite struct MemoryPressureSourceTests {
    @Test func totalsAreReadFromBothLines() {
        let text = "some avg10=7.40 avg60=1.47 avg300=0.31 total=1281037\nfull avg10=2.93 avg60=0.57 avg300=0.12 total=529554\n"
        #expect(PressureFiles.parse(Array(text.utf8)) == PressureFiles.Totals(some: 1_281_037, full: 529_554))
        #expect(PressureFiles.parse(Array("some avg10=0.00 total=5\n".utf8)) == nil)
        #expect(PressureFiles.parse(Array("garbage".utf8)) == nil)
    }

    @Test func theLevelComesFromTheStallSharesBetweenTwoLooks() {
        typealias Look = (totals: PressureFiles.Totals, nanoseconds: UInt64)
        let before: Look = (PressureFiles.Totals(some: 1000, full: 500), 0)
        func level(some: UInt64, full: UInt64) -> MemoryPressureWatch.Level {
            // One second later: µs of stall are tenths of a thousandth of it.
            MemoryPressureWatch.level(from: before, to: (PressureFiles.Totals(some: 1000 + some, full: 500 + full),
                                                         1_000_000_000), warningPercent: 10, criticalPercent: 5)
        }
        #expect(level(some: 0, full: 0) == .normal)
        #expect(level(some: 99_999, full: 0) == .normal)
        #expect(level(some: 100_000, full: 0) == .warning)
        #expect(level(some: 100_000, full: 50_000) == .critical)
        #expect(level(some: 0, full: 60_000) == .critical)
    }

    @Test func theKeysAreInTheProfilesAndValidated() throws {
        var configuration = RuntimeConfiguration(cores: 2)
        configuration.memoryPressureWindowMilliseconds = 100
        #expect(throws: RuntimeError.self) { try configuration.validate() }
        let zero = try BoardProfile.named("raspberry-pi-zero-2w", machine: testMachine)
        #expect(zero.configuration.memoryPressureWindowMilliseconds == 2000)
        #expect(zero.configuration.memoryWarningSomePercent == 10)
    }

    /// `.critical`'s answer: the pages of the kept I/O buffers go back to the system; the
    /// buffers stay kept and usable (reading zeros until written), the budget unchanged.
    @Test func trimmingGivesBackTheKeptBuffersPages() {
        let pool = IOBufferPool(chunkBytes: 65536, budget: 1 << 20)
        let buffers = (0..<3).map { _ in pool.take(capacity: 65536) }
        for buffer in buffers {
            buffer.initializeMemory(as: UInt8.self, repeating: 0xAB, count: 65536)
            pool.giveBack(buffer, capacity: 65536)
        }
        #expect(pool.trim() == 3 * 65536)
        let again = pool.take(capacity: 65536)
        #expect(buffers.contains(again), "a kept buffer is reused after the trim")
        #expect(again.load(fromByteOffset: 4096, as: UInt8.self) == 0, "its pages were given back")
        again.storeBytes(of: 7, toByteOffset: 0, as: UInt8.self)
        #expect(again.load(as: UInt8.self) == 7)
        pool.giveBack(again, capacity: 65536)
        #expect(pool.budget == 1 << 20)
    }

    /// The node pool gives back the pages of the free nodes above the highest one in
    /// use, drops its high-water mark to them, and hands them out again as fresh nodes.
    @Test func trimmingTheNodePoolKeepsNodesInUseAndTheCapacity() {
        let pool = try! WorkNodePool(capacity: 40_000)
        let context = ThreadContext(worker: nil)
        var nodes: [WorkNodeRef] = []
        for _ in 0..<20_000 { nodes.append(pool.allocate(kind: .block, priority: QoSPriority(.default), context: context)) }
        // Keep the first 100 in use; free the rest, back to the shared list.
        for node in nodes[100...] { pool.release(node, context: context) }
        pool.giveBack(context)
        let given = pool.trim()
        #expect(given >= 19_000 * MemoryLayout<WorkNode>.stride - 2 * MachineFiles.pageBytes, "gave back \(given) bytes")
        #expect(pool.trim() == 0, "nothing more to give back")
        // The nodes in use are untouched; all 40,000 - 100 can still be taken.
        #expect(nodes[..<100].allSatisfy { $0.pointee.kind == .block })
        var again: [WorkNodeRef] = []
        for _ in 0..<(40_000 - 100) {
            again.append(pool.allocate(kind: .job, priority: QoSPriority(.default), context: context))
        }
        #expect(Set(again).count == 40_000 - 100)
        #expect(Set(again).isDisjoint(with: Set(nodes[..<100])))
        for node in again + nodes[..<100] { pool.release(node, context: context) }
        pool.giveBack(context)
    }

    /// An active source with no pressure runs no timer: nothing wakes for it.
    @Test func anIdleSourceRunsNoTimer() async {
        await #expect(processExitsWith: .success) {
            MemoryPressureScenario.startRuntime()
            let source = DispatchSource.makeMemoryPressureSource(eventMask: .all, queue: .global()) as! DispatchSource
            source.setEventHandler {}
            source.activate()
            guard let watch = MemoryPressureScenario.watch(of: source) else { MemoryPressureScenario.fail("no watch") }
            if PressureFiles.memoryFile() == nil { Runtime.exit(status: 0) }  // no PSI: cancelled instead
            if watch.isPolling { MemoryPressureScenario.fail("polling although triggers are allowed here") }
            if watch.isTimerRunning && watch.currentLevel == .normal {
                MemoryPressureScenario.fail("a timer runs while the level is normal")
            }
            Runtime.exit(status: 0)
        }
    }

    /// Without PSI the source is cancelled on activation, the message naming the cause.
    @Test func withoutPSITheSourceIsCancelledSayingWhy() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            MemoryPressureScenario.startRuntime()
            SyscallFaults.inject(.pressureRead, .noSuchFile, thread: SyscallFaults.anyThread)
            let cancelled = DispatchSemaphore(value: 0)
            let source = DispatchSource.makeMemoryPressureSource(eventMask: .all, queue: .global())
            source.setCancelHandler { cancelled.signal() }
            source.activate()
            if cancelled.wait(timeout: .now() + .seconds(20)) != .success {
                MemoryPressureScenario.fail("the source was not cancelled")
            }
            Runtime.exit(status: 0)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("has no pressure-stall information"), "stderr: \(text)")
        #expect(text.contains("psi=1"))
    }

    /// A refused trigger (EPERM, as before Linux 6.5 without CAP_SYS_RESOURCE): the file
    /// is read on a timer instead, said in one line naming the key.
    @Test func aRefusedTriggerFallsBackToReadingTheFile() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            MemoryPressureScenario.startRuntime()
            if PressureFiles.memoryFile() == nil { Runtime.exit(status: 0) }
            SyscallFaults.inject(.pressureTrigger, .notPermitted, thread: SyscallFaults.anyThread)
            let source = DispatchSource.makeMemoryPressureSource(eventMask: .all, queue: .global()) as! DispatchSource
            source.setEventHandler {}
            source.activate()
            guard let watch = MemoryPressureScenario.watch(of: source) else { MemoryPressureScenario.fail("no watch") }
            if !MemoryPressureScenario.eventually({ watch.isPolling && watch.isTimerRunning }) {
                MemoryPressureScenario.fail("not polling after the trigger was refused")
            }
            Runtime.exit(status: 0)
        }
        let text = result?.standardErrorText ?? ""
        if PressureFiles.memoryFile() != nil {
            #expect(text.contains("refused a PSI trigger") && text.contains("CAP_SYS_RESOURCE")
                    && text.contains("'memoryPressurePollMilliseconds'"), "stderr: \(text)")
        }
    }

    /// Without CAP_SYS_RESOURCE: on Linux 6.5 and later a trigger with a window of a
    /// multiple of 2 s (the default) is still allowed, another window is refused
    /// (EINVAL) and the source reads the file instead; before 6.5 every trigger is
    /// refused (EPERM), and the source reads the file whatever the window.
    @Test func withoutCapSysResourceTheDefaultWindowKeepsTriggers() async {
        await #expect(processExitsWith: .success) { MemoryPressureScenario.unprivileged(windowMilliseconds: 2000) }
    }

    @Test func withoutCapSysResourceAnOddWindowFallsBack() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            MemoryPressureScenario.unprivileged(windowMilliseconds: 1000)
        }
        let text = result?.standardErrorText ?? ""
        if PressureFiles.memoryFile() != nil {
            #expect(text.contains("refused a PSI trigger") && text.contains("CAP_SYS_RESOURCE")
                    && text.contains("'memoryPressurePollMilliseconds'"), "stderr: \(text)")
        }
    }

    /// A real squeeze: the source must see .warning or .critical, then .normal once it
    /// ends — with triggers, and with the fallback reading the file.
    @Test func aRealSqueezeRaisesTheLevelAndItFallsBack() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            MemoryPressureScenario.squeeze(fallback: false)
        }
        MemoryPressureScenario.reportSkip(result)
    }

    /// The same with the trigger refused: the file read on the timer sees it too.
    @Test func aRealSqueezeIsSeenByTheFallback() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            MemoryPressureScenario.squeeze(fallback: true)
        }
        MemoryPressureScenario.reportSkip(result)
    }
}

/// What the child processes run.
enum MemoryPressureScenario {
    /// A scenario that could not run here says why on stdout ("skip: ..."): printed, so
    /// that a skip is never silent. Its figures ("delay_ms ...") are printed too.
    static func reportSkip(_ result: ExitTest.Result?) {
        guard let result else { return }
        let text = String(decoding: result.standardOutputContent, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("skip:") || line.hasPrefix("measured:") {
            print("MemoryPressureSourceTests: \(line)")
        }
    }

    static func fail(_ message: String) -> Never {
        let line = Array("memory-pressure scenario: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        Runtime.exit(status: 1)
    }

    /// A runtime whose thresholds a squeeze of a few seconds crosses: 1 % of a 2 s window.
    static func startRuntime() {
        var configuration = RuntimeConfiguration(cores: 2)
        configuration.memoryWarningSomePercent = 1
        configuration.memoryCriticalFullPercent = 1
        configuration.memoryPressureRecheckMilliseconds = 200
        configuration.memoryPressurePollMilliseconds = 200
        do {
            try Runtime.start(configuration: configuration)
        } catch {
            fail("Runtime.start: \(error)")
        }
    }

    /// The source's watch, once the manager has registered it.
    static func watch(of source: DispatchSource) -> MemoryPressureWatch? {
        var found: MemoryPressureWatch?
        _ = eventually { found = MemoryPressureWatch.watch(of: source); return found != nil }
        return found
    }

    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.nanoseconds + 20_000_000_000
        while MonotonicClock.nanoseconds < deadline {
            if condition() { return true }
            ThreadControl.nap(nanoseconds: 2_000_000)
        }
        return condition()
    }

    /// A source in a process whose threads lack CAP_SYS_RESOURCE: triggers where the
    /// kernel allows them (6.5+, a window of a multiple of 2 s), the file read on a timer
    /// elsewhere.
    static func unprivileged(windowMilliseconds: Int) -> Never {
        let dropped = rl_drop_capability(24)
        if dropped != 0 { fail("capset: \(Errno(negated: dropped).name)") }
        var configuration = RuntimeConfiguration(cores: 2)
        configuration.memoryPressureWindowMilliseconds = windowMilliseconds
        do {
            try Runtime.start(configuration: configuration)
        } catch {
            fail("Runtime.start: \(error)")
        }
        if PressureFiles.memoryFile() == nil { Runtime.exit(status: 0) }
        let source = DispatchSource.makeMemoryPressureSource(eventMask: .all, queue: .global()) as! DispatchSource
        source.setEventHandler {}
        source.activate()
        guard let watch = watch(of: source) else { fail("no watch") }
        let release = MachineFiles.kernelRelease.split(separator: ".").compactMap { Int($0.prefix { $0.isNumber }) }
        let allowsUnprivileged = release.count >= 2 && (release[0], release[1]) >= (6, 5)
        let expectTriggers = allowsUnprivileged && windowMilliseconds % 2000 == 0
        if !eventually({ watch.isPolling != expectTriggers }) {
            fail("kernel \(MachineFiles.kernelRelease), window \(windowMilliseconds) ms: "
                + (expectTriggers ? "polling, though the kernel allows this trigger" : "no fallback to polling"))
        }
        Runtime.exit(status: 0)
    }

    static func squeeze(fallback: Bool) -> Never {
        startRuntime()
        guard PressureFiles.memoryFile() != nil else {
            print("skip: the kernel has no PSI here")
            Runtime.exit(status: 0)
        }
        if fallback { SyscallFaults.inject(.pressureTrigger, .notPermitted, thread: SyscallFaults.anyThread) }
        let seen = Atomic<UInt>(0)
        let source = DispatchSource.makeMemoryPressureSource(eventMask: .all, queue: .global())
        source.setEventHandler { seen.bitwiseOr(source.data.rawValue, ordering: .acquiringAndReleasing) }
        source.activate()
        guard let watch = watch(of: source as! DispatchSource) else { fail("no watch") }
        _ = eventually { watch.isPolling == fallback }
        let cgroup = "/sys/fs/cgroup/memory/ringlet-squeeze-\(getpid())"
        let file = "/tmp/ringlet-squeeze-\(getpid()).bin"
        let child = rl_memory_squeeze(cgroup, 64 << 20, 48 << 20, file, 40 << 20, 30)
        guard child > 0 else {
            print("skip: no squeeze here (\(Errno(negated: child).name): needs root and a cgroup v1 memory controller)")
            Runtime.exit(status: 0)
        }
        let started = MonotonicClock.nanoseconds
        let raised = eventually { seen.load(ordering: .acquiring) & 0x6 != 0 }
        let raisedAfter = (MonotonicClock.nanoseconds - started) / 1_000_000
        kill(child, SIGKILL)
        let killed = MonotonicClock.nanoseconds
        _ = rl_process_reap(child)
        unlink(file)
        rmdir(cgroup)
        let totals = try? PressureFiles.totals(PressureFiles.memoryFile() ?? "")
        if !raised {
            if (totals?.some ?? 0) == 0 {
                print("skip: the kernel counted no memory stall during the squeeze")
                Runtime.exit(status: 0)
            }
            fail("no .warning or .critical within 20 s of the squeeze (totals \(String(describing: totals)))")
        }
        if !eventually({ seen.load(ordering: .acquiring) & 0x1 != 0 && watch.currentLevel == .normal }) {
            fail("no .normal within 20 s of the squeeze's end")
        }
        let normalAfter = (MonotonicClock.nanoseconds - killed) / 1_000_000
        // .critical was seen (levels 5): the runtime gave memory back, and says so.
        if seen.load(ordering: .acquiring) & 0x4 != 0 {
            if Runtime.statistics.memoryPressureTrims == 0 { fail(".critical without a trim in the statistics") }
            if !Runtime.dump().contains("memory pressure:") { fail("the dump has no memory-pressure line") }
        }
        if !fallback && !eventually({ !watch.isTimerRunning }) { fail("the recheck timer still runs at .normal") }
        print("measured: \(fallback ? "fallback" : "trigger"): raised \(raisedAfter) ms after the squeeze began "
            + "(levels seen \(seen.load(ordering: .acquiring))), .normal \(normalAfter) ms after it ended")
        Runtime.exit(status: 0)
    }
}
