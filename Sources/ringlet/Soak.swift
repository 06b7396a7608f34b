// `ringlet soak`: the reliability run. Producers submit `--items` items through every
// kind of submission (see SoakWorkload.swift) while a monitor samples the process's
// threads and memory; at the end a ledger proves that every item ran exactly once or,
// when cancelled, was notified; that serial queues kept FIFO order per producer; and
// that barriers ran alone. Exits 1 on any violation, on a thread count that moved, or
// on memory above its bound; prints one summary line either way.
import ArgumentParser
import BenchSupport
import Glibc
import Ringlet
import Synchronization

struct Soak: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Submit many items through every kind of queue and check that each ran exactly once.",
        discussion: """
            Prints `soak: ...` with the items, time, throughput, peak RSS, threads and every check; exits 1 when \
            an item was lost or ran twice, FIFO order or a barrier was broken, the thread count changed, or the \
            peak RSS passed its bound.
            """)

    @Option(help: "Items to submit, all producers together.")
    var items = 10_000_000

    @Option(help: "Producer threads.")
    var producers = 8

    @Option(help: "Serial queues (concurrent queues: a sixteenth as many, at least 4).")
    var serialQueues = 64

    @Option(help: "The runtime's work-node pool (configuration key workNodes; default: the derived value).")
    var workNodes: Int?

    @Option(help: "Cores the runtime plans for (default: the online CPUs).")
    var cores: Int?

    @Option(help: "Seed of the producers' choices.")
    var seed: UInt64 = 1

    @Option(help: "Seconds to wait for the last items before declaring them lost.")
    var patience = 300

    @Option(help: "Instead of the items: this many rounds of nested sync over shared serial queues, begun with every thread of the high band and the reserve blocked in sync.")
    var syncChains: Int?

    func run() throws {
        var configuration = RuntimeConfiguration.derived()
        if let cores { configuration = RuntimeConfiguration(cores: cores) }
        if let workNodes { configuration.workNodes = workNodes }
        let runtime: Runtime
        do {
            runtime = try Runtime.start(configuration: configuration)
        } catch {
            throw ValidationError("Runtime.start failed: \(error)")
        }
        if let syncChains {
            if !SoakSyncChains.run(rounds: syncChains, runtime: runtime, patience: patience).isEmpty {
                throw ExitCode(1)
            }
            return
        }
        let startRSS = benchResidentBytes()
        let ledger = SoakLedger(items: items)
        let serial = (0..<serialQueues).map { SoakSerialQueue(index: $0, producers: producers) }
        let concurrent = (0..<max(4, serialQueues / 16)).map { SoakConcurrentQueue(index: $0) }
        // main + producers + the monitor + the runtime's own threads.
        let expectedThreads = 1 + producers + 1 + Runtime.statistics.runtimeThreads
        let monitor = SoakMonitor()
        monitor.start()

        let began = benchNow()
        let share = (items + producers - 1) / producers
        let threads = (0..<producers).map { producer in
            let range = min(producer * share, items)..<min((producer + 1) * share, items)
            return benchStartThread { [serial, concurrent, seed] in
                SoakWorkload.produce(producer, range: range, serial: serial, concurrent: concurrent,
                                     ledger: ledger, seed: seed)
            }
        }
        for thread in threads { pthread_join(thread, nil) }
        let submitted = benchNow()
        var settled = false
        while Double(benchNow() - submitted) / 1e9 < Double(patience) {
            if ledger.settled { settled = true; break }
            benchSleep(nanoseconds: 5_000_000)
        }
        let elapsed = Double(benchNow() - began) / 1e9

        let tally = ledger.tally()
        let statistics = Runtime.statistics
        let peakRSS = benchStatusBytes("VmHWM:")
        // Bound: what the process had at start, the ledger, every work node touched,
        // the queues, and 64 MiB for closures in flight and the allocator's slack.
        let rssBound = startRSS + ledger.bytes + statistics.reservedBytes + serialQueues * 4096 + (64 << 20)
        var failures: [String] = []
        if !settled { failures.append("not settled within \(patience) s") }
        if tally.lost > 0 { failures.append("\(tally.lost) item(s) lost (first: #\(tally.firstLost ?? -1))") }
        let duplicates = ledger.duplicates.load(ordering: .relaxed)
        if duplicates > 0 { failures.append("\(duplicates) item(s) ran twice") }
        let order = ledger.orderViolations.load(ordering: .relaxed)
        if order > 0 { failures.append("\(order) FIFO order violation(s) on serial queues") }
        let barriers = ledger.barrierViolations.load(ordering: .relaxed)
        if barriers > 0 { failures.append("\(barriers) item(s) ran beside a barrier") }
        let cancelled = ledger.cancelledCount.load(ordering: .relaxed)
        let notified = ledger.notifications.load(ordering: .relaxed)
        if notified != cancelled { failures.append("\(notified) notifications for \(cancelled) cancelled items") }
        // The producers are gone: what is left is main, the monitor and the runtime.
        let threadsAfter = benchThreadCount()
        monitor.stop()
        if monitor.maximumThreads > expectedThreads || threadsAfter != expectedThreads - producers {
            failures.append("threads moved: at most \(monitor.maximumThreads) during the run (expected "
                + "\(expectedThreads)), \(threadsAfter) after it (expected \(expectedThreads - producers))")
        }
        if peakRSS > rssBound { failures.append("peak RSS \(peakRSS >> 20) MiB above its bound \(rssBound >> 20) MiB") }

        let configurationText = "cores \(runtime.configuration.cores), workNodes \(runtime.configuration.workNodes)"
        print("soak: \(items) items from \(producers) producers over \(serialQueues) serial and \(concurrent.count) "
            + "concurrent queues and the global queues (\(configurationText)): "
            + "\(Double(Int(elapsed * 100)) / 100) s, \(Int(Double(items) / elapsed)) items/s; "
            + "peak RSS \(peakRSS >> 20) MiB (bound \(rssBound >> 20) MiB); "
            + "threads at most \(monitor.maximumThreads) (main, monitor, \(producers) producers and the runtime's "
            + "\(statistics.runtimeThreads)); "
            + "pool peak \(statistics.workNodesPeak) of \(statistics.workNodeCapacity), "
            + "\(statistics.workNodeExhaustionWaits) wait(s) for a node; "
            + "cancelled \(cancelled) (of them ran before the cancel: \(tally.cancelledRan), notified \(notified)); "
            + (failures.isEmpty ? "PASS" : "FAIL: " + failures.joined(separator: "; ")))
        if !failures.isEmpty { throw ExitCode(1) }
    }
}

/// Samples the process's thread count and RSS every 20 ms on its own thread.
final class SoakMonitor: @unchecked Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let lowest = Atomic<Int>(Int.max)
    private let highest = Atomic<Int>(0)
    private var thread = pthread_t()

    var minimumThreads: Int { lowest.load(ordering: .acquiring) }
    var maximumThreads: Int { highest.load(ordering: .acquiring) }

    func start() {
        thread = benchStartThread { [self] in
            while !stopFlag.load(ordering: .relaxed) {
                sample()
                benchSleep(nanoseconds: 20_000_000)
            }
        }
        while highest.load(ordering: .acquiring) == 0 { sched_yield() }
    }

    func stop() {
        sample()
        stopFlag.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
    }

    private func sample() {
        let threads = benchThreadCount()
        if threads < lowest.load(ordering: .relaxed) { lowest.store(threads, ordering: .relaxed) }
        if threads > highest.load(ordering: .relaxed) { highest.store(threads, ordering: .relaxed) }
    }
}
