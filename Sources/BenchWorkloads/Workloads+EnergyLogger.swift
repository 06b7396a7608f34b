// The logger of `ringlet bench-energy` on a dispatch runtime (Dispatch or Ringlet): each
// sensor a repeating timer source on a queue of its own, the batch a background timer.
#if BENCH_RINGLET
import Ringlet
#elseif BENCH_DISPATCH
import Dispatch
#else
#error("Sources/BenchWorkloads is compiled only through BenchWorkloadsDispatch and BenchWorkloadsRinglet")
#endif
import BenchSupport
import Glibc

extension Workloads {
    /// Runs the logger for `nanoseconds` with timers whose leeway is `leewayPercent` of
    /// their interval: 100 Hz sensors at user-initiated, 10 Hz at utility, 1 Hz at
    /// background. Returns its figures: lateness, CPU time, context switches.
    package static func energyLogger(nanoseconds: UInt64, leewayPercent: UInt64) -> [(String, Double)] {
        let path = "/tmp/ringlet-bench-energy-\(getpid()).log"
        let log = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard log >= 0 else {
            fputs("ringlet bench-energy: could not open \(path) (errno \(errno))\n", stderr)
            exit(3)
        }
        let lateness = BenchLateness(sensors: BenchEnergyLogger.hertz.count)
        let group = DispatchGroup()
        var sources: [DispatchSourceTimer] = []
        let start = DispatchTime.now().uptimeNanoseconds
        for sensor in BenchEnergyLogger.hertz.indices {
            let interval = BenchEnergyLogger.interval(sensor)
            let qos: DispatchQoS = interval < 100_000_000 ? .userInitiated : interval < 1_000_000_000 ? .utility
                : .background
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "bench.energy.\(sensor)", qos: qos))
            let first = start + interval
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: first), repeating: .nanoseconds(Int(interval)),
                           leeway: .nanoseconds(Int(interval / 100 * leewayPercent)))
            var fires: UInt64 = 0
            var samples: [Double] = []
            timer.setEventHandler {
                fires += UInt64(timer.data)
                lateness.record(sensor: sensor, deadline: first + (fires - 1) * interval, now: benchNow())
                samples.append(Double(benchNow() % 1000))
                if samples.count > 64 { samples.removeFirst(32) }
            }
            timer.setCancelHandler { group.leave() }
            group.enter()
            sources.append(timer)
        }
        let batch = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "bench.energy.batch", qos: .background))
        batch.schedule(deadline: .now() + .nanoseconds(Int(BenchEnergyLogger.batchNanoseconds)),
                       repeating: .nanoseconds(Int(BenchEnergyLogger.batchNanoseconds)),
                       leeway: .nanoseconds(Int(BenchEnergyLogger.batchNanoseconds / 100 * leewayPercent)))
        batch.setEventHandler { benchWriteBatch(log, bytes: 8 * 1024) }
        batch.setCancelHandler { group.leave() }
        group.enter()
        sources.append(batch)
        for source in sources { source.activate() }
        let measured = benchMeasureWhileSleeping(nanoseconds: nanoseconds)
        for source in sources { source.cancel() }
        group.wait()
        close(log)
        unlink(path)
        return measured + lateness.summary(bound: BenchEnergyLogger.latenessBound)
    }
}
