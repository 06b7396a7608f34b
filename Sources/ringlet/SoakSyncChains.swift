// `ringlet soak --sync-chains N`: N rounds of nested `sync` over shared serial queues
// (some with a serial target) from more default-QoS items than the pool has threads,
// started while every thread of the high band and the reserve is blocked in `sync`
// onto one of them. Only the hand-over of a freed queue to its waiting caller lets
// this finish (the Reliability article, "sync hands the queue to its waiter"); each
// round must run exactly once, and the thread count never moves.
import BenchSupport
import Glibc
import Ringlet
import Synchronization

enum SoakSyncChains {
    /// Runs the chains; returns the failures (empty: passed) and prints one line.
    static func run(rounds: Int, runtime: Runtime, patience: Int) -> [String] {
        let statistics = Runtime.statistics
        let configuration = runtime.configuration
        let band = configuration.workers - configuration.lowQoSWorkers + configuration.reserve
        let items = max(4 * band, 16)
        let perItem = max(rounds / items, 1)
        let total = items * perItem
        let a = DispatchQueue(label: "soak.chain.a")
        let b = DispatchQueue(label: "soak.chain.b")
        let c = DispatchQueue(label: "soak.chain.c")
        let d = DispatchQueue(label: "soak.chain.d")
        let t = DispatchQueue(label: "soak.chain.t")
        let children = (0..<2).map { DispatchQueue(label: "soak.chain.t\($0)", target: t) }
        let counts = RoundCounts(total)
        let threadsBefore = benchThreadCount()
        let done = DispatchGroup()
        let release = Atomic<Bool>(false)
        let holding = DispatchSemaphore(value: 0)
        let holder = benchStartThread {
            a.sync {
                holding.signal()
                while !release.load(ordering: .acquiring) { sched_yield() }
            }
        }
        holding.wait()
        let began = benchNow()
        for item in 0..<items {
            DispatchQueue.global().async(group: done) {
                for round in 0..<perItem {
                    a.sync {
                        b.sync { c.sync { counts.ran(item * perItem + round) } }
                        children[(item + round) % 2].sync {}
                    }
                    d.sync {}
                }
            }
        }
        var failures: [String] = []
        // Every thread that may run default work is blocked in sync onto `a`.
        var blocked = 0
        while benchNow() - began < 10_000_000_000 {
            blocked = Runtime.statistics.blockedThreads
            if blocked >= band { break }
            benchSleep(nanoseconds: 1_000_000)
        }
        if blocked < band { failures.append("only \(blocked) of \(band) threads blocked in sync before the start") }
        release.store(true, ordering: .releasing)
        pthread_join(holder, nil)
        let finished = done.wait(timeout: .now() + .seconds(patience)) == .success
        let elapsed = Double(benchNow() - began) / 1e9
        if !finished { failures.append("not finished within \(patience) s (a stalled sync chain)") }
        let wrong = counts.notOnce
        if wrong > 0 { failures.append("\(wrong) round(s) did not run exactly once") }
        let threadsAfter = benchThreadCount()
        if threadsAfter != threadsBefore {
            failures.append("threads moved: \(threadsBefore) before, \(threadsAfter) after")
        }
        let seconds = Double(Int(elapsed * 100)) / 100
        let verdict = failures.isEmpty ? "PASS" : "FAIL: " + failures.joined(separator: "; ")
        let backend = statistics.backend.description
        print("soak: sync chains, \(total) rounds from \(items) items over 7 serial queues, \(blocked) of \(band) "
            + "threads blocked in sync at the start (\(backend) backend): \(seconds) s; \(verdict)")
        return failures
    }
}

/// One counter per round, bumped by the round's innermost closure.
final class RoundCounts: @unchecked Sendable {
    private let counts: UnsafeMutablePointer<Atomic<UInt8>>
    private let total: Int

    init(_ total: Int) {
        self.total = total
        counts = .allocate(capacity: total)
        for index in 0..<total { (counts + index).initialize(to: Atomic<UInt8>(0)) }
    }

    deinit { counts.deallocate() }

    func ran(_ round: Int) { counts[round].wrappingAdd(1, ordering: .relaxed) }

    /// Rounds that did not run exactly once.
    var notOnce: Int { (0..<total).filter { counts[$0].load(ordering: .relaxed) != 1 }.count }
}
