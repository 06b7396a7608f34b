// Strict QoS scheduling, observed on a pool whose occupancy the test controls. Each
// test runs in its own child process (a Swift Testing exit test) with a fresh runtime
// on a 2-core configuration — 2 high-band workers, 1 utility, 1 background, 2 reserve —
// so no other test's work can take or hold a worker. Issues recorded in the child are
// reported here.

import Testing
@testable import Ringlet

@Suite struct QoSSchedulingTests {
    @Test func higherQoSIsAlwaysDequeuedFirst() async {
        await #expect(processExitsWith: .success) { QoSSchedulingScenarios.strictOrderInTheHighBand() }
    }

    @Test func theUtilityBandTakesUtilityBeforeBackground() async {
        await #expect(processExitsWith: .success) { QoSSchedulingScenarios.strictOrderInTheLowBand() }
    }

    @Test func userInteractiveStartsDuringABackgroundFlood() async {
        await #expect(processExitsWith: .success) { QoSSchedulingScenarios.backgroundFlood() }
    }

    /// Its twelve items spin (yielding) at a gate: under ThreadSanitizer one was covered as
    /// asleep in the kernel and the reserve started more (`threadSanitizerActive`).
    @Test(.enabled(if: !threadSanitizerActive, "under ThreadSanitizer a spinner may sleep in the sanitizer's runtime"))
    func lowQoSWorkKeepsToItsBand() async {
        await #expect(processExitsWith: .success) { QoSSchedulingScenarios.lowQoSBound() }
    }

    @Test func kernelHintsFollowTheBand() async {
        await #expect(processExitsWith: .success) { QoSSchedulingScenarios.kernelHints(utilityNice: 5, idle: true) }
    }

    @Test func kernelHintsFollowTheConfiguration() async {
        await #expect(processExitsWith: .success) { QoSSchedulingScenarios.kernelHints(utilityNice: 9, idle: false) }
    }

    /// A userInitiated waiter (an async push, a `sync`, a `DispatchWorkItem.wait`)
    /// gets background items queued ahead of it run by a high-band worker while every
    /// low-band worker is busy: the inversion is resolved.
    @Test(arguments: ["async", "sync", "workItemWait"])
    func priorityInversionIsResolved(by waiter: String) async {
        await #expect(processExitsWith: .success) { [waiter] in QoSSchedulingScenarios.inversion(waiter) }
    }

    /// "A higher-QoS item submitted to a serial queue raises the QoS at which that
    /// queue drains until the item has run": not beyond it.
    @Test func theRaiseEndsAtTheRaisingItem() async {
        await #expect(processExitsWith: .success) { QoSSchedulingScenarios.raiseEndsAtTheRaisingItem() }
    }
}

/// The bodies of the child processes above.
enum QoSSchedulingScenarios {
    /// Holds every worker of the band that runs `qosClass` work with a `Gate`, one
    /// item at a time; returns the gates in the order the items started, or nil
    /// (after recording an issue) when they did not all start.
    static func occupy(_ count: Int, at qosClass: DispatchQoS.QoSClass) -> [Gate]? {
        var gates: [Gate] = []
        for index in 0..<count {
            let gate = Gate(), started = DispatchSemaphore(value: 0)
            DispatchQueue.global(qos: qosClass).async {
                started.signal()
                gate.pass()
            }
            guard waited(started) else {
                Issue.record("blocker \(index) at \(qosClass) never started")
                return nil
            }
            gates.append(gate)
        }
        return gates
    }

    static func strictOrderInTheHighBand() {
        startRuntime(twoCoreConfiguration())
        let configuration = Runtime.current.configuration
        guard let gates = occupy(configuration.workers - configuration.lowQoSWorkers, at: .default) else { return }
        // Submitted least urgent first where it matters, with ties to check FIFO.
        let plan: [(String, DispatchQoS)] = [
            ("default-10", DispatchQoS(qosClass: .default, relativePriority: -10)),
            ("interactive0-a", .userInteractive),
            ("default0", .default),
            ("initiated-1", DispatchQoS(qosClass: .userInitiated, relativePriority: -1)),
            ("interactive-15", DispatchQoS(qosClass: .userInteractive, relativePriority: -15)),
            ("initiated0", .userInitiated),
            ("interactive0-b", .userInteractive),
            ("default-15", DispatchQoS(qosClass: .default, relativePriority: -15)),
            ("interactive0-c", .userInteractive),
        ]
        let order = Recorder<String>()
        for (name, qos) in plan {
            DispatchQueue.global().async(qos: qos) { order.append(name) }
        }
        let pending = Runtime.statistics.runnablePerQoS
        #expect(pending.userInteractive == 4 && pending.userInitiated == 2 && pending.default == 3,
                "runnable per QoS while the high band is held: \(pending)")
        // One worker comes free: it must take the queued items strictly by priority.
        gates[0].open()
        let ranAll = eventually { order.count == plan.count }
        for gate in gates { gate.open() }
        #expect(ranAll, "only \(order.values) ran")
        let expected = ["interactive0-a", "interactive0-b", "interactive0-c", "interactive-15",
                        "initiated0", "initiated-1", "default0", "default-10", "default-15"]
        #expect(order.values == expected, "ran in order \(order.values)")
    }

    static func strictOrderInTheLowBand() {
        startRuntime(twoCoreConfiguration())
        // The utility-band worker first, then the background one (a background item
        // prefers an idle background worker).
        guard let utilityGate = occupy(1, at: .utility)?.first,
              let backgroundGate = occupy(1, at: .background)?.first else { return }
        let order = Recorder<String>()
        for index in 0..<3 {
            DispatchQueue.global(qos: .background).async { order.append("background\(index)") }
            DispatchQueue.global(qos: .utility).async { order.append("utility\(index)") }
        }
        utilityGate.open()
        let ranAll = eventually { order.count == 6 }
        backgroundGate.open()
        #expect(ranAll, "only \(order.values) ran")
        #expect(order.values == ["utility0", "utility1", "utility2", "background0", "background1", "background2"],
                "ran in order \(order.values)")
    }

    static func backgroundFlood() {
        startRuntime(twoCoreConfiguration())
        let lowWorkers = Runtime.current.configuration.lowQoSWorkers
        let started = AtomicCounter(), finished = AtomicCounter()
        // CPU-bound background items, each 5 s (the child exits long before they end):
        // they keep every low-band worker busy, at SCHED_IDLE or nice.
        for _ in 0..<(3 * lowWorkers) {
            DispatchQueue.global(qos: .background).async {
                started.increment()
                spin(seconds: 5)
                finished.increment()
            }
        }
        guard eventually({ started.value == lowWorkers }) else {
            Issue.record("the background flood did not start: \(started.value) of \(lowWorkers)")
            return
        }
        var latencies: [Double] = []
        for _ in 0..<10 {
            let submitted = monotonicNanoseconds
            let observed = Recorder<(Double, Int)>()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global(qos: .userInteractive).async {
                observed.append((secondsSince(submitted), finished.value))
                done.signal()
            }
            guard waited(done, seconds: 5) else {
                Issue.record("a userInteractive item did not run within 5 s of a background flood")
                return
            }
            let (latency, finishedBefore) = observed.values[0]
            latencies.append(latency)
            #expect(finishedBefore == 0, "a userInteractive item waited for \(finishedBefore) background item(s)")
        }
        #expect(finished.value == 0, "the userInteractive items took longer than one background item")
        #expect(latencies.max()! < 0.5, "userInteractive start latencies under a background flood: \(latencies)")
        // Under ThreadSanitizer a spinner can sleep inside the sanitizer's runtime, and the
        // kernel cover then rightly lets a reserve worker start another item: each extra
        // one must be such a cover. Without it, the band's workers are the only ones.
        let covered = threadSanitizerActive ? Runtime.statistics.workersCoveredInKernel : 0
        #expect(started.value <= lowWorkers + covered, """
            background work ran on more than the low band's \(lowWorkers) workers \
            (\(started.value) items started, \(covered) kernel cover(s))
            """)
    }

    static func lowQoSBound() {
        startRuntime(twoCoreConfiguration())
        let configuration = Runtime.current.configuration
        let meter = OverlapMeter()
        let gate = Gate()
        let bands = Recorder<WorkerBand?>()
        let group = DispatchGroup()
        for index in 0..<12 {
            let qos: DispatchQoS.QoSClass = index % 2 == 0 ? .utility : .background
            DispatchQueue.global(qos: qos).async(group: group) {
                bands.append(currentBand)
                meter.measure { gate.pass() }
            }
        }
        #expect(eventually { meter.current == configuration.lowQoSWorkers })
        // However long the low-QoS items hold their workers, no more of them start...
        #expect(!eventually(within: 0.1) { meter.current > configuration.lowQoSWorkers })
        // ...and default work still finds a high-band worker at once.
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { done.signal() }
        #expect(waited(done, seconds: 1), "default work was blocked by utility and background items")
        gate.open()
        #expect(waited(group))
        #expect(meter.maximum == configuration.lowQoSWorkers)
        #expect(bands.values.allSatisfy { $0 == .utility || $0 == .background }, "\(bands.values)")
    }

    static func kernelHints(utilityNice: Int, idle: Bool) {
        let baseline = ThreadControl.kernelPriority
        var configuration = twoCoreConfiguration()
        configuration.utilityNice = utilityNice
        configuration.backgroundSchedIdle = idle
        // The gate below holds the utility worker on the CPU; on a saturated machine the
        // cover of workers blocked in the kernel could take that for a sleep and let the
        // reserve run the gate's neighbours, which would sample the wrong band.
        configuration.coverCheckMilliseconds = 0
        startRuntime(configuration)
        func sample(_ qosClass: DispatchQoS.QoSClass, _ count: Int) -> [(nice: Int32, isIdle: Bool)] {
            let seen = Recorder<(nice: Int32, isIdle: Bool)>()
            for _ in 0..<count {
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global(qos: qosClass).async {
                    seen.append(ThreadControl.kernelPriority)
                    done.signal()
                }
                if !waited(done) { Issue.record("a \(qosClass) item did not run") }
            }
            return seen.values
        }
        // With the utility-band worker held, background items can only run on the
        // background band.
        guard let utilityGate = occupy(1, at: .utility)?.first else { return }
        let backgroundBand = sample(.background, 6)
        utilityGate.open()
        // Otherwise they may also run on the utility band: never at default priority.
        let background = sample(.background, 6)
        let utility = sample(.utility, 6)
        let interactive = sample(.userInteractive, 4) + sample(.default, 4)
        let utilityNice = Int32(max(utilityNice, Int(baseline.nice)))
        #expect(backgroundBand.allSatisfy { idle ? $0.isIdle || $0.nice == 19 : !$0.isIdle && $0.nice == 19 },
                "background band: \(backgroundBand), want \(idle ? "SCHED_IDLE (or nice 19)" : "nice 19")")
        #expect(background.allSatisfy { $0.isIdle || $0.nice > baseline.nice }, "\(background)")
        #expect(utility.allSatisfy { $0.nice == utilityNice && !$0.isIdle }, "\(utility), want nice \(utilityNice)")
        #expect(interactive.allSatisfy { $0.nice == baseline.nice && !$0.isIdle }, "\(interactive)")
    }

    static func inversion(_ waiter: String) {
        startRuntime(twoCoreConfiguration())
        // Hold both low-band workers: nothing can run background work now.
        guard let utilityGates = occupy(1, at: .utility), let backgroundGates = occupy(1, at: .background) else {
            return
        }
        let gates = utilityGates + backgroundGates
        defer { for gate in gates { gate.open() } }
        let queue = DispatchQueue(label: "test.inversion")
        let ran = Recorder<(String, QoSLevel)>()
        let item = DispatchWorkItem(qos: .background) { ran.append(("item", currentLevel)) }
        for index in 0..<3 {
            queue.async(qos: .background) { ran.append(("background\(index)", currentLevel)) }
        }
        if waiter == "workItemWait" { queue.async(execute: item) }
        // Nothing runs the queue yet: its items are background work.
        #expect(!eventually(within: 0.1) { ran.count > 0 }, "background items ran while the low band was held")

        let done = DispatchSemaphore(value: 0)
        switch waiter {
        case "async":
            queue.async(qos: .userInitiated) {
                ran.append(("waiter", currentLevel))
                done.signal()
            }
        case "sync":
            DispatchQueue.global(qos: .userInitiated).async {
                queue.sync { ran.append(("waiter", currentLevel)) }
                done.signal()
            }
        default:
            DispatchQueue.global(qos: .userInitiated).async {
                item.wait()
                ran.append(("waiter", currentLevel))
                done.signal()
            }
        }
        #expect(waited(done, seconds: 5), "the \(waiter) waiter was not served: \(ran.values.map(\.0))")
        var expected = (0..<3).map { ("background\($0)", QoSLevel.background) }
        if waiter == "workItemWait" { expected.append(("item", .background)) }
        expected.append(("waiter", .userInitiated))
        // The raised items keep their own QoS; the waiter runs at its own.
        #expect(ran.values.map(\.0) == expected.map(\.0))
        #expect(ran.values.map(\.1) == expected.map(\.1), "levels \(ran.values)")
    }

    static func raiseEndsAtTheRaisingItem() {
        startRuntime(twoCoreConfiguration())
        guard let utilityGates = occupy(1, at: .utility), let backgroundGates = occupy(1, at: .background) else {
            return
        }
        let gates = utilityGates + backgroundGates
        defer { for gate in gates { gate.open() } }
        let queue = DispatchQueue(label: "test.inversion.ends")
        let ran = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        // Queue everything while suspended so that the order in the FIFO is fixed:
        // background items, the userInitiated item, more background items.
        queue.suspend()
        for index in 0..<3 { queue.async(qos: .background) { ran.append("before\(index)") } }
        queue.async(qos: .userInitiated) {
            ran.append("raising")
            done.signal()
        }
        for index in 0..<3 { queue.async(qos: .background) { ran.append("after\(index)") } }
        queue.resume()
        #expect(waited(done, seconds: 5), "the userInitiated item was not served: \(ran.values)")
        // Once the raising item has run, the rest is background work again: it waits
        // for the (held) low band instead of running on a high-band worker.
        #expect(!eventually(within: 0.1) { ran.count > 4 }, "ran on the high band after the raise: \(ran.values)")
        for gate in gates { gate.open() }
        #expect(eventually { ran.count == 7 })
        #expect(ran.values == ["before0", "before1", "before2", "raising", "after0", "after1", "after2"])
    }
}
