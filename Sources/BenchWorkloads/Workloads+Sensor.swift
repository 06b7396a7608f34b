// The sensor workload of `ringlet bench` (issue 15): what a small board's data logger
// does, run for a few seconds on each runtime, measured as CPU time, wake-ups and an
// energy estimate every machine can give (and RAPL energy where it is readable).
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
    /// Three repeating timers at different QoS — 50 Hz user-initiated (sampling), 10 Hz
    /// utility (appends a 64-byte record to a log file), 1 Hz background (rewrites a
    /// 1 KiB summary file) — each with a leeway of a tenth of its interval, and a read
    /// source on a pipe a device thread feeds with 32 bytes every 100 ms. Measured while
    /// main sleeps `scale.sensorNanoseconds`: context switches of every thread but main
    /// (the device thread's included, the same on both sides), CPU time, RAPL energy.
    static func sensor(_ scale: BenchScale) -> [(String, Double)] {
        let log = open("/tmp/ringlet-bench-sensor-\(getpid()).log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let summary = open("/tmp/ringlet-bench-sensor-\(getpid()).summary", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var ends: [Int32] = [-1, -1]
        guard log >= 0, summary >= 0, pipe(&ends) == 0, fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0 else {
            fputs("ringlet bench: sensor: could not open its files in /tmp or its pipe (errno \(errno))\n", stderr)
            exit(3)
        }
        let counts = SensorCounts()
        let group = DispatchGroup()
        var sources: [DispatchSourceProtocol] = []
        func timer(hertz: Int, qos: DispatchQoS, _ label: String, _ handler: @escaping () -> Void) {
            let interval = 1_000_000_000 / hertz
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label, qos: qos))
            source.schedule(deadline: .now() + .nanoseconds(interval), repeating: .nanoseconds(interval),
                            leeway: .nanoseconds(interval / 10))
            source.setEventHandler(handler: handler)
            source.setCancelHandler { group.leave() }
            group.enter()
            sources.append(source)
        }
        var samples: [Double] = []
        timer(hertz: 50, qos: .userInitiated, "bench.sensor.sample") {
            BenchSensorWork.sample(&samples)
            counts.add(\.samples)
        }
        timer(hertz: 10, qos: .utility, "bench.sensor.log") {
            BenchSensorWork.appendRecord(log)
            counts.add(\.logWrites)
        }
        timer(hertz: 1, qos: .background, "bench.sensor.summary") {
            BenchSensorWork.writeSummary(summary)
            counts.add(\.summaryWrites)
        }
        let reader = DispatchSource.makeReadSource(fileDescriptor: ends[0],
                                                   queue: DispatchQueue(label: "bench.sensor.device", qos: .utility))
        reader.setEventHandler {
            for _ in 0..<BenchSensorWork.drain(ends[0]) { counts.add(\.deviceReads) }
        }
        reader.setCancelHandler { group.leave() }
        group.enter()
        sources.append(reader)
        let device = BenchPipeFeeder(fd: ends[1], bytes: 32, intervalNanoseconds: 100_000_000)
        device.start()
        for source in sources { source.activate() }
        benchSleep(nanoseconds: 200_000_000)  // the first fires and reads: not counted
        let measured = benchMeasureWhileSleeping(nanoseconds: scale.sensorNanoseconds)
        device.stop()
        for source in sources { source.cancel() }
        group.wait()
        close(ends[0]); close(ends[1]); close(log); close(summary)
        unlink("/tmp/ringlet-bench-sensor-\(getpid()).log")
        unlink("/tmp/ringlet-bench-sensor-\(getpid()).summary")
        let values = Dictionary(measured, uniquingKeysWith: { a, _ in a })
        let seconds = (values["window_ns"] ?? 1) / 1e9
        let switches = values["switches"] ?? 0
        return measured + counts.figures() + [
            ("device_writes", Double(device.writes)),
            ("wakeups_per_s", switches / seconds),
            ("energy_estimate_uj", BenchEnergyModel.microjoules(cpuNanoseconds: values["cpu_ns"] ?? 0,
                                                                wakeups: switches))]
    }

    /// The second sensor mix (issue 35), the shape a new user tries first: six repeating
    /// timers between 1 and 100 Hz over four QoS classes, each with a tenth of its interval
    /// as leeway — 100 Hz user-initiated, 25 Hz default, 20 Hz utility and 2 Hz background
    /// sample; 5 Hz utility and 1 Hz background append 64 bytes to a log — and a read
    /// source on a pipe a device thread feeds every 50 ms. Measured as `sensor` is.
    static func sensorMix(_ scale: BenchScale) -> [(String, Double)] {
        let log = open("/tmp/ringlet-bench-mix-\(getpid()).log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var ends: [Int32] = [-1, -1]
        guard log >= 0, pipe(&ends) == 0, fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0 else {
            fputs("ringlet bench: sensor-mix: could not open its file in /tmp or its pipe (errno \(errno))\n", stderr)
            exit(3)
        }
        let fires = (0..<6).map { _ in SensorCounts() }
        let group = DispatchGroup()
        var sources: [DispatchSourceProtocol] = []
        for (index, timer) in BenchWakeupFloor.mixTimers.enumerated() {
            let qos: DispatchQoS = [.userInitiated, .default, .utility, .utility, .background, .background][index]
            let appends = timer.appends
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "bench.mix.\(index)", qos: qos))
            let interval = Int(timer.timer.interval)
            source.schedule(deadline: .now() + .nanoseconds(interval), repeating: .nanoseconds(interval),
                            leeway: .nanoseconds(interval / 10))
            var samples: [Double] = []
            source.setEventHandler {
                if appends { BenchSensorWork.appendRecord(log) } else { BenchSensorWork.sample(&samples) }
                fires[index].add(\.samples)
            }
            source.setCancelHandler { group.leave() }
            group.enter()
            sources.append(source)
        }
        let reads = SensorCounts()
        let reader = DispatchSource.makeReadSource(fileDescriptor: ends[0],
                                                   queue: DispatchQueue(label: "bench.mix.device", qos: .utility))
        reader.setEventHandler {
            for _ in 0..<BenchSensorWork.drain(ends[0]) { reads.add(\.deviceReads) }
        }
        reader.setCancelHandler { group.leave() }
        group.enter()
        sources.append(reader)
        let device = BenchPipeFeeder(fd: ends[1], bytes: 32, intervalNanoseconds: 50_000_000)
        device.start()
        for source in sources { source.activate() }
        benchSleep(nanoseconds: 200_000_000)
        let measured = benchMeasureWhileSleeping(nanoseconds: scale.sensorNanoseconds)
        device.stop()
        for source in sources { source.cancel() }
        group.wait()
        close(ends[0]); close(ends[1]); close(log)
        unlink("/tmp/ringlet-bench-mix-\(getpid()).log")
        let values = Dictionary(measured, uniquingKeysWith: { a, _ in a })
        let seconds = (values["window_ns"] ?? 1) / 1e9
        let fired = fires.reduce(0) { $0 + ($1.figures().first?.1 ?? 0) }
        return measured + [("samples", fired), ("device_reads", reads.figures()[3].1),
                           ("device_writes", Double(device.writes)),
                           ("wakeups_per_s", (values["switches"] ?? 0) / seconds)]
    }

    /// What the sensor workload's handlers did (each written by its own handler only).
    final class SensorCounts: @unchecked Sendable {
        var samples = 0
        var logWrites = 0
        var summaryWrites = 0
        var deviceReads = 0
        private let lock = DispatchSemaphore(value: 1)

        func add(_ field: ReferenceWritableKeyPath<SensorCounts, Int>) {
            lock.wait()
            self[keyPath: field] += 1
            lock.signal()
        }

        func figures() -> [(String, Double)] {
            lock.wait()
            defer { lock.signal() }
            return [("samples", Double(samples)), ("log_writes", Double(logWrites)),
                    ("summary_writes", Double(summaryWrites)), ("device_reads", Double(deviceReads))]
        }
    }
}
