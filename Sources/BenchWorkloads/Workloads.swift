// The workloads of `ringlet bench`, written once and compiled twice: into the module
// BenchWorkloadsDispatch against the toolchain's Dispatch (swift-corelibs-libdispatch)
// and into BenchWorkloadsRinglet against Ringlet, so the two sides run the same code.
//
// How: both runtimes define `DispatchQueue` & co., so no file can import both, and
// SwiftPM refuses two targets that list the same file. So this directory is no target
// of its own: each of the two targets in Package.swift holds a symbolic link
// `Workloads -> ../BenchWorkloads` to it (SwiftPM follows it; git stores it as a link),
// and defines a compilation condition, BENCH_DISPATCH or BENCH_RINGLET, that picks the
// import at the top of every file here. Each module has its own `Workloads`; the
// `ringlet` tool imports both and runs `BenchWorkloadsDispatch.Workloads.run` or
// `BenchWorkloadsRinglet.Workloads.run` in a child process of its own
// (Sources/ringlet/Bench.swift, where they are `DispatchSide` and `RingletSide`).
//
// What differs between the sides lives in each target's own small file, not here:
// the hooks `runtimeStatistics()`, `pendingItemStatistics()` and `bringUpThreads(with:)`
// in Sources/BenchWorkloadsDispatch/Workloads+Dispatch.swift and
// Sources/BenchWorkloadsRinglet/Workloads+Ringlet.swift, which also starts Ringlet.
//
// Adding a row: its case in `BenchRow` and its sizes in `BenchScale`
// (Sources/BenchSupport/BenchScale.swift); its title, target and headline figure in
// Sources/ringlet/BenchRows.swift; and its workload once, here: a function returning
// `key value` figures and its line in `run`. Both sides then run it; the compiler
// points at every switch that needs the new case. A new file in this directory joins
// both modules by itself: begin it with the same `#if` import. Helpers that touch no
// runtime (clocks, /proc readers) go to Sources/BenchSupport. Workloads on Swift
// concurrency go here too (Workloads+Concurrency.swift): in the Dispatch module their
// tasks run on the toolchain's default executor, in the Ringlet module on Ringlet's,
// which the child installs by starting the runtime from its synchronous main; a side
// that needs imports of its own is one more target of this kind.
#if BENCH_RINGLET
import Ringlet
#elseif BENCH_DISPATCH
import Dispatch
#else
#error("Sources/BenchWorkloads is compiled only through BenchWorkloadsDispatch and BenchWorkloadsRinglet")
#endif
import BenchSupport
import Glibc
import Synchronization

package enum Workloads {
    /// One row's workload: its figures as `key value` pairs, then the side's own statistics.
    package static func run(_ row: BenchRow, _ scale: BenchScale, variant: String?) -> [(String, Double)] {
        let out: [(String, Double)]
        switch row {
        case .serialAsync, .serialAsyncTraced: out = serialAsync(scale)
        case .serialAsyncGroup: out = serialAsync(scale, group: DispatchGroup())
        case .serialAsyncProducers: out = serialAsyncProducers(scale)
        case .pingPong: out = pingPong(scale)
        case .sync: out = uncontendedSync(scale)
        case .concurrentPerform: out = concurrentPerform(scale)
        case .threads, .blockingWall: out = blocking(scale, serialQueues: variant == "serial-queues")
        case .latency: out = latency(scale)
        case .latencyYieldingFlood: out = latencyYieldingFlood(scale)
        case .memory: out = memory(scale)
        case .memoryLabelled: out = memoryLabelled(scale)
        case .idleWakeups: out = idleWakeups(scale)
        case .timers, .timersWindow, .timersCPU, .energy: out = timers(scale)
        case .strictLateness: out = strictLateness(scale)
        case .ioSequential, .ioRandom, .ioPipe, .ioThreads: out = io(scale)
        case .taskSpawn: out = taskSpawn(scale)
        case .actorPingPong: out = actorPingPong(scale)
        case .taskSleep: out = taskSleep(scale)
        case .taskThreads: out = taskThreads(scale)
        case .mainActorP50, .mainActorP99: mainActorHops(scale)
        case .sensorCPU, .sensorWakeups, .sensorEnergy: out = sensor(scale)
        case .sensorMixCPU, .sensorMixWakeups: out = sensorMix(scale)
        case .asyncMainTaskSpawn, .asyncMainActorPingPong, .asyncMainTaskThreads:
            // Their child is Sources/RingletAsyncMainBench (`BenchRow.childProgram`).
            fatalError("bench: row \(row.rawValue) runs in RingletAsyncMainBench, not in this child")
        }
        return out + runtimeStatistics()
    }

    /// ns per item for `n` empty items async onto one serial queue, then one `sync`.
    /// Empty items submitted to one serial queue from this thread (each with `group`,
    /// when given), then one `sync` to wait for the last.
    static func serialAsync(_ scale: BenchScale, group: DispatchGroup? = nil) -> [(String, Double)] {
        let n = scale.serialItems
        let queue = DispatchQueue(label: "bench.serial")
        func once(_ items: Int) -> UInt64 {
            let start = benchNow()
            if let group {
                for _ in 0..<items { queue.async(group: group) {} }
                group.wait()
            } else {
                for _ in 0..<items { queue.async {} }
                queue.sync {}
            }
            return benchNow() - start
        }
        _ = once(n / 10)
        let runs = benchRepeat(scale.repetitions) { once(n) }
        return benchPerUnit(runs, n)
    }

    /// The same from `serialProducers` plain threads at once, onto one serial queue.
    static func serialAsyncProducers(_ scale: BenchScale) -> [(String, Double)] {
        let n = scale.serialItems
        let producers = scale.serialProducers
        let queue = DispatchQueue(label: "bench.serial.producers")
        func once(_ items: Int) -> UInt64 {
            let share = items / producers
            let ready = Atomic<Int>(0)
            let go = Atomic<Bool>(false)
            let threads = (0..<producers).map { _ in
                benchStartThread {
                    ready.wrappingAdd(1, ordering: .acquiringAndReleasing)
                    while !go.load(ordering: .acquiring) {}
                    for _ in 0..<share { queue.async {} }
                }
            }
            while ready.load(ordering: .acquiring) < producers {}
            let start = benchNow()
            go.store(true, ordering: .releasing)
            for thread in threads { pthread_join(thread, nil) }
            queue.sync {}
            return benchNow() - start
        }
        _ = once(n / 10)
        let runs = benchRepeat(scale.repetitions) { once(n) }
        return benchPerUnit(runs, n / producers * producers)
    }

    final class PingPong: @unchecked Sendable {
        let a = DispatchQueue(label: "bench.ping")
        let b = DispatchQueue(label: "bench.pong")
        let done = DispatchSemaphore(value: 0)
        var hops = 0
        var limit = 0

        func hop(onA: Bool) {
            hops += 1
            if hops >= limit {
                done.signal()
                return
            }
            (onA ? b : a).async { self.hop(onA: !onA) }
        }

        func run(_ n: Int) -> UInt64 {
            hops = 0
            limit = n
            let start = benchNow()
            a.async { self.hop(onA: true) }
            done.wait()
            return benchNow() - start
        }
    }

    /// ns per hop for a chain of items alternating between two serial queues.
    static func pingPong(_ scale: BenchScale) -> [(String, Double)] {
        let n = scale.hops
        let pingPong = PingPong()
        _ = pingPong.run(n / 10)
        let runs = benchRepeat(scale.repetitions) { pingPong.run(n) }
        return benchPerUnit(runs, n)
    }

    /// ns per `sync {}` on an idle serial queue from one thread.
    static func uncontendedSync(_ scale: BenchScale) -> [(String, Double)] {
        let n = scale.syncCalls
        let queue = DispatchQueue(label: "bench.sync")
        var sum = 0
        func once(_ calls: Int) -> UInt64 {
            let start = benchNow()
            for i in 0..<calls { queue.sync { sum &+= i } }
            return benchNow() - start
        }
        _ = once(n / 10)
        let runs = benchRepeat(scale.repetitions) { once(n) }
        benchKeep(sum)
        return benchPerUnit(runs, n)
    }

    /// ns per iteration of `concurrentPerform` with a tiny body (a hash stored per index).
    static func concurrentPerform(_ scale: BenchScale) -> [(String, Double)] {
        let n = scale.performIterations
        let buffer = UnsafeMutablePointer<UInt64>.allocate(capacity: n)
        buffer.initialize(repeating: 0, count: n)
        defer { buffer.deallocate() }
        func once(_ iterations: Int) -> UInt64 {
            let start = benchNow()
            DispatchQueue.concurrentPerform(iterations: iterations) { i in
                buffer[i] = benchHash(UInt64(i))
            }
            return benchNow() - start
        }
        _ = once(n / 10)
        let runs = benchRepeat(scale.repetitions) { once(n) }
        benchKeep(buffer[n - 1])
        return benchPerUnit(runs, n)
    }

    /// Wall time for items that each block in a syscall, on the default global queue
    /// (or, with `serialQueues`, each on its own serial queue).
    static func blocking(_ scale: BenchScale, serialQueues: Bool) -> [(String, Double)] {
        let group = DispatchGroup()
        let nanoseconds = scale.blockingNanoseconds
        let queues = serialQueues ? (0..<scale.blockingItems).map { _ in DispatchQueue(label: "bench.blocking") } : []
        let start = benchNow()
        for i in 0..<scale.blockingItems {
            let queue = serialQueues ? queues[i] : DispatchQueue.global()
            queue.async(group: group) { benchSleep(nanoseconds: nanoseconds) }
        }
        group.wait()
        return [("wall_ns", Double(benchNow() - start))]
    }

    final class Flood: @unchecked Sendable {
        let stop = Atomic<Bool>(false)
        let running = Atomic<Int>(0)
        let peakRunning = Atomic<Int>(0)
        let started = Atomic<Int>(0)

        func item(cpuNanoseconds: UInt64) {
            started.wrappingAdd(1, ordering: .relaxed)
            let now = running.wrappingAdd(1, ordering: .relaxed).newValue
            var seen = peakRunning.load(ordering: .relaxed)
            while now > seen {
                let (exchanged, original) = peakRunning.compareExchange(expected: seen, desired: now,
                                                                        ordering: .relaxed)
                if exchanged { break }
                seen = original
            }
            benchSpin(cpuNanoseconds: cpuNanoseconds, stop: stop)
            running.wrappingSubtract(1, ordering: .relaxed)
        }

        /// One slice of CPU, then `usleep(0)` (a loop body that "yields" to the kernel),
        /// then the same again as a new background item, until stopped: the flood keeps
        /// its items in flight and every one of them passes through the scheduler.
        func churn(sliceNanoseconds: UInt64) {
            started.wrappingAdd(1, ordering: .relaxed)
            benchSpin(cpuNanoseconds: sliceNanoseconds, stop: stop)
            usleep(0)
            if stop.load(ordering: .relaxed) { return }
            DispatchQueue.global(qos: .background).async { self.churn(sliceNanoseconds: sliceNanoseconds) }
        }
    }

    /// Start latency of user-interactive items submitted from a plain thread while
    /// background items spin on the CPU.
    static func latency(_ scale: BenchScale) -> [(String, Double)] {
        let cpu = scale.floodCPUNanoseconds
        return interactiveLatencies(scale, gap: scale.interactiveGapNanoseconds) { flood in
            flood.item(cpuNanoseconds: cpu)
        }
    }

    /// The same under a flood written as a user would: background items that spin a
    /// slice, `usleep(0)`, and submit the next such item, `scale.floodItems` of them
    /// in flight until the measurement ends.
    static func latencyYieldingFlood(_ scale: BenchScale) -> [(String, Double)] {
        let slice = scale.yieldingSliceNanoseconds
        return interactiveLatencies(scale, gap: scale.yieldingGapNanoseconds) { flood in
            flood.churn(sliceNanoseconds: slice)
        }
    }

    /// `scale.floodItems` background items running `floodItem`, then
    /// `scale.interactiveItems` user-interactive items `gap` apart: the latency from
    /// each `async` to its item's start.
    private static func interactiveLatencies(_ scale: BenchScale, gap: UInt64,
                                             floodItem: @escaping @Sendable (Flood) -> Void) -> [(String, Double)] {
        let flood = Flood()
        let floodGroup = DispatchGroup()
        for _ in 0..<scale.floodItems {
            DispatchQueue.global(qos: .background).async(group: floodGroup) { floodItem(flood) }
        }
        benchSleep(nanoseconds: 50_000_000)  // let the flood occupy the cores

        let n = scale.interactiveItems
        let submitted = BenchSlots(count: n)
        let started = BenchSlots(count: n)
        defer { submitted.deallocate(); started.deallocate() }
        let group = DispatchGroup()
        let interactive = DispatchQueue.global(qos: .userInteractive)
        for i in 0..<n {
            submitted[i] = benchNow()
            interactive.async(group: group) { started[i] = benchNow() }
            benchSleep(nanoseconds: gap)
        }
        group.wait()
        let floodStarted = flood.started.load(ordering: .relaxed)
        flood.stop.store(true, ordering: .relaxed)
        floodGroup.wait()
        return benchLatencies((0..<n).map { started[$0] &- submitted[$0] }) + [
            ("flood_started", Double(floodStarted)),
            ("flood_peak_parallel", Double(flood.peakRunning.load(ordering: .relaxed)))]
    }

    final class Counter: @unchecked Sendable {
        let value = Atomic<Int>(0)
        func add() { value.wrappingAdd(1, ordering: .relaxed) }
    }

    /// RSS growth for inactive serial queues holding pending items; then runs them all.
    static func memory(_ scale: BenchScale) -> [(String, Double)] {
        let counter = Counter()
        let group = DispatchGroup()
        var queues: [DispatchQueue] = []
        queues.reserveCapacity(scale.queues)
        let before = benchResidentBytes()
        for _ in 0..<scale.queues {
            let queue = DispatchQueue(label: "bench.memory", attributes: .initiallyInactive)
            for _ in 0..<scale.pendingPerQueue { queue.async(group: group) { counter.add() } }
            queues.append(queue)
        }
        let after = benchResidentBytes()
        let pending = pendingItemStatistics()
        for queue in queues { queue.activate() }
        group.wait()
        queues.removeAll()
        let expected = scale.queues * scale.pendingPerQueue
        return [("rss_delta_bytes", Double(after - before)), ("rss_before_bytes", Double(before)),
                ("items", Double(expected)), ("items_run", Double(counter.value.load(ordering: .relaxed)))]
            + pending
    }

    /// The memory row written as a user writes it: `scale.queues` queues labelled
    /// "q0", "q1", … that all target one suspended serial queue, each given
    /// `scale.pendingPerQueue` empty closures; RSS growth, then the target resumes and
    /// every item must run.
    static func memoryLabelled(_ scale: BenchScale) -> [(String, Double)] {
        let target = DispatchQueue(label: "bench.memory.target")
        target.suspend()
        var queues: [DispatchQueue] = []
        queues.reserveCapacity(scale.queues)
        let before = benchResidentBytes()
        for index in 0..<scale.queues {
            let queue = DispatchQueue(label: "q\(index)", target: target)
            for _ in 0..<scale.pendingPerQueue { queue.async {} }
            queues.append(queue)
        }
        let after = benchResidentBytes()
        let anonAfter = benchStatusBytes("RssAnon:")
        let pending = pendingItemStatistics()
        target.resume()
        // Empty closures count nothing: a sync behind each queue's items returns once
        // they have run (a lost wake-up would hang here, and the parent reports it).
        for queue in queues { queue.sync {} }
        queues.removeAll()
        return [("rss_delta_bytes", Double(after - before)), ("rss_before_bytes", Double(before)),
                ("rss_after_bytes", Double(after)), ("anon_after_bytes", Double(anonAfter))] + pending
    }

    /// Context switches of the runtime's threads (all but the calling one) while it is idle
    /// for `scale.idleNanoseconds`, after a warm-up of 20 small items.
    static func idleWakeups(_ scale: BenchScale) -> [(String, Double)] {
        let queue = DispatchQueue(label: "bench.idle")
        bringUpThreads(with: queue)
        let counter = Counter()
        let group = DispatchGroup()
        for i in 0..<20 {
            (i % 2 == 0 ? DispatchQueue.global() : queue).async(group: group) { counter.add() }
        }
        group.wait()
        return benchIdleWakeups(nanoseconds: scale.idleNanoseconds)
            + [("warmup_items_run", Double(counter.value.load(ordering: .relaxed)))]
    }

    /// `scale.timers` repeating timers on one serial queue, their first deadlines spread
    /// evenly over one interval, handlers that only log their lateness: what the threads
    /// did (context switches, CPU time, energy) over `scale.timersNanoseconds`, and
    /// whether each fire came inside its window.
    static func timers(_ scale: BenchScale) -> [(String, Double)] {
        let queue = DispatchQueue(label: "bench.timers")
        let group = DispatchGroup()
        let interval = scale.timerIntervalNanoseconds
        let leeway = scale.timerLeewayNanoseconds
        let expectedRuns = Int((scale.timersNanoseconds + 1_000_000_000) / interval)
        let base = benchNow() + 300_000_000
        var timers: [DispatchSourceTimer] = []
        var logs: [BenchTimerLog] = []
        for i in 0..<scale.timers {
            let first = base + interval * UInt64(i) / UInt64(scale.timers)
            let log = BenchTimerLog(first: first, interval: interval, leeway: leeway, expectedRuns: expectedRuns)
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: first), repeating: .nanoseconds(Int(interval)),
                           leeway: .nanoseconds(Int(leeway)))
            timer.setEventHandler {
                let now = benchNow()
                _ = log.record(data: timer.data, now: now)
            }
            timer.setCancelHandler { group.leave() }
            group.enter()
            timers.append(timer)
            logs.append(log)
        }
        for timer in timers { timer.activate() }
        // Measure from just before the first deadline: activation is not counted.
        benchSleep(until: base - 20_000_000)
        let measured = benchMeasureWhileSleeping(nanoseconds: scale.timersNanoseconds)
        for timer in timers { timer.cancel() }
        group.wait()
        return measured + benchTimerSummary(logs)
    }

    /// Lateness of `scale.strictFires` fires of one `.strict` repeating timer with leeway 0.
    static func strictLateness(_ scale: BenchScale) -> [(String, Double)] {
        let queue = DispatchQueue(label: "bench.strict")
        let reached = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let interval = scale.strictIntervalNanoseconds
        let first = benchNow() + 50_000_000
        let log = BenchTimerLog(first: first, interval: interval, leeway: 0, expectedRuns: scale.strictFires,
                                limit: scale.strictFires)
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: first), repeating: .nanoseconds(Int(interval)),
                       leeway: .nanoseconds(0))
        timer.setEventHandler {
            let now = benchNow()
            if log.record(data: timer.data, now: now) { reached.signal() }
        }
        // The cancel handler runs after the last event handler: the log is complete.
        timer.setCancelHandler { finished.signal() }
        timer.activate()
        reached.wait()
        timer.cancel()
        finished.wait()
        return benchTimerSummary([log])
    }
}
