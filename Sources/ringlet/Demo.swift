import ArgumentParser
import Glibc
import Histogram
import Ringlet

/// `ringlet demo`: a short, real workload on the default configuration that shows
/// what the runtime does — its fixed threads, QoS order, latencies, statistics.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run a short workload and print what happened.")

    @Option(help: "Items in the throughput phase.")
    var items = 200_000

    func run() throws {
        let runtime = try Runtime.start(configuration: .derived())
        let configuration = runtime.configuration
        let threadsBefore = Runtime.statistics.processThreads
        print("Ringlet demo")
        print("  configuration: \(configuration.cores) cores, \(configuration.workers) workers "
            + "(\(configuration.workers - configuration.lowQoSWorkers) for default and higher QoS, "
            + "\(configuration.lowQoSWorkers) for utility/background), \(configuration.reserve) reserve, "
            + "\(configuration.workNodes) work nodes")
        print("  process threads after start: \(threadsBefore)")
        throughput()
        latencyUnderBackgroundLoad()
        blockingItems()
        timers()
        let statistics = Runtime.statistics
        print("statistics")
        print("  items run per QoS: user-interactive \(statistics.itemsRunPerQoS.userInteractive), "
            + "user-initiated \(statistics.itemsRunPerQoS.userInitiated), default \(statistics.itemsRunPerQoS.default), "
            + "utility \(statistics.itemsRunPerQoS.utility), background \(statistics.itemsRunPerQoS.background)")
        print("  items pending now: \(statistics.pendingPerQoS.total)")
        print("  work nodes: peak \(statistics.workNodesPeak) of \(statistics.workNodeCapacity), in use now "
            + "\(statistics.workNodesInUse), waits for a free node \(statistics.workNodeExhaustionWaits)")
        print("  process threads now: \(statistics.processThreads) (pool \(statistics.workers + statistics.reserve) "
            + "+ manager + main; never more)")
    }

    /// Many small items over serial queues of every QoS and a concurrent queue.
    private func throughput() {
        let classes: [DispatchQoS] = [.userInteractive, .userInitiated, .default, .utility, .background]
        let queues = (0..<10).map { DispatchQueue(label: "demo.serial.\($0)", qos: classes[$0 % classes.count]) }
        let concurrent = DispatchQueue(label: "demo.concurrent", attributes: .concurrent)
        let group = DispatchGroup()
        let start = now()
        for i in 0..<items {
            if i % 4 == 3 {
                concurrent.async(group: group, flags: i % 1000 == 999 ? .barrier : []) {}
            } else {
                queues[i % queues.count].async(group: group) {}
            }
        }
        group.wait()
        let elapsed = now() - start
        print("throughput: \(items) items over 10 serial queues (all five QoS) and a concurrent queue with "
            + "barriers in \(elapsed / 1_000_000) ms (\(elapsed / UInt64(items)) ns/item)")
    }

    /// User-interactive latency while background items keep the low band busy.
    private func latencyUnderBackgroundLoad() {
        let background = DispatchQueue.global(qos: .background)
        let flood = DispatchGroup()
        for _ in 0..<16 { background.async(group: flood) { spin(milliseconds: 50) } }
        let latencies = LatencyRecorder()
        let done = DispatchGroup()
        for _ in 0..<200 {
            let submitted = now()
            DispatchQueue.global(qos: .userInteractive).async(group: done) {
                latencies.record(microseconds: (now() - submitted) / 1000)
            }
            usleep(1000)
        }
        done.wait()
        flood.wait()
        let histogram = latencies.histogram
        print("latency: user-interactive items while 16 background items spin 50 ms each: "
            + "p50 \(histogram.valueAtPercentile(50)) us, p99 \(histogram.valueAtPercentile(99)) us, "
            + "max \(histogram.max) us")
    }

    /// asyncAfter through the manager's timers: never early, late by at most the
    /// window, and timers due close together share the manager's wake-ups.
    private func timers() {
        let lateness = LatencyRecorder()
        let done = DispatchGroup()
        let wakeupsBefore = Runtime.statistics.managerWakeups
        let start = DispatchTime.now()
        for index in 0..<100 {
            let deadline = start + .milliseconds(20 + (index % 20) * 5)
            done.enter()
            DispatchQueue.global(qos: index % 2 == 0 ? .default : .utility).asyncAfter(deadline: deadline) {
                lateness.record(microseconds: (now() - deadline.uptimeNanoseconds) / 1000)
                done.leave()
            }
        }
        done.wait()
        let histogram = lateness.histogram
        print("timers: 100 asyncAfter items due over 100 ms ran \(histogram.min)-\(histogram.max) us after their "
            + "deadlines (p50 \(histogram.valueAtPercentile(50)) us, never early) on "
            + "\(Runtime.statistics.managerWakeups - wakeupsBefore) manager wake-ups")
    }

    /// Items that block: the pool does not grow, the work still finishes.
    private func blockingItems() {
        let group = DispatchGroup()
        let start = now()
        for _ in 0..<32 { DispatchQueue.global().async(group: group) { usleep(10_000) } }
        group.wait()
        print("blocking: 32 items sleeping 10 ms each finished in \((now() - start) / 1_000_000) ms on "
            + "\(Runtime.statistics.processThreads) process threads")
    }
}

/// HdrHistogram behind a semaphore used as a mutex.
final class LatencyRecorder: @unchecked Sendable {
    private let mutex = DispatchSemaphore(value: 1)
    private var recorded = Histogram<UInt64>(numberOfSignificantValueDigits: .three)

    func record(microseconds: UInt64) {
        mutex.wait()
        recorded.record(microseconds)
        mutex.signal()
    }

    var histogram: Histogram<UInt64> {
        mutex.wait()
        defer { mutex.signal() }
        return recorded
    }
}

private func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

private func spin(milliseconds: UInt64) {
    let end = now() + milliseconds * 1_000_000
    while now() < end {}
}
