// The workloads of `ringlet bench --scale` (see BenchSweep in Sources/BenchSupport): one
// point of one sweep per child process, the same code for both runtimes.
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

extension Workloads {
    /// One point of `sweep` at `load`: its figures as `key value` pairs.
    package static func sweep(_ sweep: BenchSweep, load: Int, quick: Bool) -> [(String, Double)] {
        switch sweep {
        case .timers: return timerSweep(load, seconds: quick ? 1 : 3)
        case .sources: return sourceSweep(load, events: quick ? 5_000 : 30_000)
        case .queues: return queueSweep(load, items: quick ? 20_000 : 100_000)
        case .producers:
            var scale = quick ? BenchScale.quick : BenchScale.full
            scale.serialItems = quick ? 50_000 : 200_000
            scale.serialProducers = load
            scale.repetitions = quick ? 1 : 3
            return serialAsyncProducers(scale)
        }
    }

    /// `count` repeating timers, 100 ms apart with 20 ms leeway, their first deadlines
    /// spread over one interval, on one serial queue: the process's CPU time and the
    /// other threads' context switches per fire over `seconds`.
    static func timerSweep(_ count: Int, seconds: UInt64) -> [(String, Double)] {
        let queue = DispatchQueue(label: "bench.scale.timers")
        let fires = Counter()
        let interval: UInt64 = 100_000_000
        let base = benchNow() + 300_000_000
        let timers = (0..<count).map { i in
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let first = base + interval * UInt64(i) / UInt64(count)
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: first), repeating: .nanoseconds(Int(interval)),
                           leeway: .milliseconds(20))
            timer.setEventHandler { fires.add() }
            return timer
        }
        for timer in timers { timer.activate() }
        benchSleep(until: base - 20_000_000)
        let before = fires.value.load(ordering: .relaxed)
        let measured = benchMeasureWhileSleeping(nanoseconds: seconds * 1_000_000_000)
        let fired = Double(max(fires.value.load(ordering: .relaxed) - before, 1))
        for timer in timers { timer.cancel() }
        let figures = Dictionary(measured, uniquingKeysWith: { a, _ in a })
        return [("cpu_ns_per_fire", (figures["cpu_ns"] ?? 0) / fired),
                ("switches_per_fire", (figures["switches"] ?? 0) / fired), ("fires", fired)]
    }

    /// `count` pipes, each with a read source on one serial queue whose handler reads
    /// the byte; rounds of one byte written to every pipe until `events` events ran:
    /// wall time per event (the writes included, the same for both runtimes).
    /// Capped to what the open-file limit allows (two descriptors per pipe), with a note.
    static func sourceSweep(_ requested: Int, events: Int) -> [(String, Double)] {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let count = min(requested, Int(min(limit.rlim_max, 1 << 30)) / 2 - 128)
        if count < requested {
            fputs("capped at \(count) pipes by the open-file limit (RLIMIT_NOFILE hard limit \(limit.rlim_max))\n", stderr)
        }
        let needed = rlim_t(2 * count + 256)
        if limit.rlim_cur < needed {
            limit.rlim_cur = min(needed, limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        var pipes: [(read: Int32, write: Int32)] = []
        for _ in 0..<count {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0, fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0 else {
                fputs("ringlet bench --scale: pipe() failed at \(pipes.count) of \(count) pipes (errno \(errno); "
                    + "raise the open-file limit, ulimit -n)\n", stderr)
                exit(3)
            }
            pipes.append((fds[0], fds[1]))
        }
        let queue = DispatchQueue(label: "bench.scale.sources")
        let handled = Counter()
        let roundDone = DispatchSemaphore(value: 0)
        let rounds = max(3, events / count)
        let target = Atomic<Int>(count)
        let sources = pipes.map { ends in
            let source = DispatchSource.makeReadSource(fileDescriptor: ends.read, queue: queue)
            source.setEventHandler {
                var byte: UInt8 = 0
                while read(ends.read, &byte, 1) == 1 {
                    let now = handled.value.wrappingAdd(1, ordering: .relaxed).newValue
                    if now == target.load(ordering: .relaxed) { roundDone.signal() }
                }
            }
            source.activate()
            return source
        }
        var one: UInt8 = 1
        // A warm-up round, then the timed ones.
        for ends in pipes { _ = write(ends.write, &one, 1) }
        roundDone.wait()
        let start = benchNow()
        for round in 2...(rounds + 1) {
            target.store(round * count, ordering: .relaxed)
            for ends in pipes { _ = write(ends.write, &one, 1) }
            roundDone.wait()
        }
        let elapsed = benchNow() - start
        for source in sources { source.cancel() }
        queue.sync {}
        for ends in pipes { close(ends.read); close(ends.write) }
        return [("ns_per_event", Double(elapsed) / Double(rounds * count)), ("events", Double(rounds * count)),
                ("sources", Double(count))]
    }

    /// `items` empty items spread evenly over `count` inactive serial queues: resident
    /// bytes per item (the queues' share included) while they wait, then the wall time
    /// per item from the first submission until the last has run after activation.
    static func queueSweep(_ count: Int, items: Int) -> [(String, Double)] {
        let perQueue = max(1, items / count)
        let counter = Counter()
        let group = DispatchGroup()
        var queues: [DispatchQueue] = []
        queues.reserveCapacity(count)
        let before = benchResidentBytes()
        let start = benchNow()
        for _ in 0..<count {
            let queue = DispatchQueue(label: "bench.scale.queue", attributes: .initiallyInactive)
            for _ in 0..<perQueue { queue.async(group: group) { counter.add() } }
            queues.append(queue)
        }
        let after = benchResidentBytes()
        for queue in queues { queue.activate() }
        group.wait()
        let elapsed = benchNow() - start
        let total = Double(count * perQueue)
        let ran = counter.value.load(ordering: .relaxed)
        if ran != count * perQueue { fputs("ringlet bench --scale: ran \(ran) of \(Int(total)) items\n", stderr) }
        return [("ns_per_item", Double(elapsed) / total), ("bytes_per_item", Double(after - before) / total),
                ("items", total)]
    }
}
