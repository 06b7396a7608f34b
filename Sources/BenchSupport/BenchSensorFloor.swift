// The CPU floor of the sensor rows (issue 35): the rows' wake-ups and their handlers'
// system calls with no runtime at all. A plain thread per band sleeps in poll(2) until
// its band's next window closes (its timers' windows merged as `BenchWakeupFloor.windows`
// merges them), runs the handlers that are due and, in the band that reads the device,
// drains the pipe. The rows' floor puts every timer and the pipe in one band, so that
// it wakes as often as the wake-up floor the rows print. `ringlet bench --child sensor-cpu
// --side floor` runs it; the sensor rows' notes print its CPU time beside both
// runtimes', so that a ratio to Dispatch can be read against what the machine charges
// for the wake-ups alone. Imports neither Dispatch nor Ringlet.
import Glibc
import Synchronization

/// The handlers' own work, the same on every side of the sensor rows.
package enum BenchSensorWork {
    /// A sample: one reading kept in a short history.
    package static func sample(_ history: inout [Double]) {
        history.append(Double(benchNow() % 1000))
        if history.count > 64 { history.removeFirst(32) }
    }

    /// Appends a 64-byte record to `fd`.
    package static func appendRecord(_ fd: Int32) {
        let record = [UInt8](repeating: 0x20, count: 63) + [0x0A]
        _ = record.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Rewrites the 1 KiB summary at the start of `fd`.
    package static func writeSummary(_ fd: Int32) {
        let block = [UInt8](repeating: 0x53, count: 1024)
        _ = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Reads the non-blocking `fd` until it is empty; returns the reads that got bytes.
    package static func drain(_ fd: Int32) -> Int {
        var buffer = [UInt8](repeating: 0, count: 256)
        var reads = 0
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 { reads += 1 }
        return reads
    }
}

/// One QoS band as the floor runs it: its timers and, when the band reads the device,
/// the pipe's non-blocking read end.
package struct BenchFloorBand {
    package var timers: [(timer: BenchWakeupFloor.Timer, fire: () -> Void)]
    package var pipe: Int32?

    package init(timers: [(timer: BenchWakeupFloor.Timer, fire: () -> Void)], pipe: Int32? = nil) {
        self.timers = timers
        self.pipe = pipe
    }
}

/// The bands' threads, from `start()` to `stop()`.
package final class BenchSensorFloor: @unchecked Sendable {
    private let bands: [BenchFloorBand]
    private let stopFlag = Atomic<Bool>(false)
    /// Written once by `stop()`: every band polls its read end, so that none sleeps on.
    private var stopPipe: [Int32] = [-1, -1]
    private var threads: [pthread_t] = []
    /// Fires of each band's timers, and the reads of the pipe that got bytes: each
    /// written by its band's thread only; final after `stop()`.
    package private(set) var fires: [[Int]]
    package private(set) var reads = 0
    /// When `start()` ran: the timers' phases count from it.
    package private(set) var origin: UInt64 = 0

    package init(_ bands: [BenchFloorBand]) {
        self.bands = bands
        fires = bands.map { Array(repeating: 0, count: $0.timers.count) }
    }

    /// Starts one thread per band; timers' phases count from now. Nil when the pipe that
    /// stops them cannot be made (the errno).
    package func start() -> Int32? {
        guard pipe(&stopPipe) == 0 else { return errno }
        origin = benchNow()
        threads = bands.indices.map { index in benchStartThread { self.run(index, origin: self.origin) } }
        return nil
    }

    /// Stops the threads and waits for them.
    package func stop() {
        stopFlag.store(true, ordering: .relaxed)
        var byte: UInt8 = 1
        _ = write(stopPipe[1], &byte, 1)
        for thread in threads { pthread_join(thread, nil) }
        threads = []
        close(stopPipe[0])
        close(stopPipe[1])
    }

    private func run(_ index: Int, origin: UInt64) {
        let band = bands[index]
        var deadlines = band.timers.map { origin + $0.timer.phase }
        var pollers = [pollfd(fd: stopPipe[0], events: Int16(POLLIN), revents: 0),
                       pollfd(fd: band.pipe ?? -1, events: Int16(POLLIN), revents: 0)]
        while !stopFlag.load(ordering: .relaxed) {
            // The window closes at the earliest deadline + leeway; every timer whose
            // deadline has come by then fires in the same wake-up.
            var windowEnd = UInt64.max
            for timer in band.timers.indices { windowEnd = min(windowEnd, deadlines[timer] + band.timers[timer].timer.leeway) }
            let now = benchNow()
            if windowEnd > now {
                // Whole milliseconds, rounded down: the wake-up lands in the last
                // millisecond of the window, after the earliest deadline as long as
                // every leeway is 1 ms or more (the rows' smallest is 1 ms).
                let milliseconds = Int32(min((windowEnd - now) / 1_000_000, UInt64(Int32.max)))
                if poll(&pollers, band.pipe == nil ? 1 : 2, milliseconds) > 0, pollers[1].revents != 0,
                   let pipe = band.pipe {
                    reads += BenchSensorWork.drain(pipe)
                }
            }
            let woke = benchNow()
            for timer in band.timers.indices where deadlines[timer] <= woke {
                band.timers[timer].fire()
                fires[index][timer] += 1
                let interval = band.timers[timer].timer.interval
                deadlines[timer] += interval * ((woke - deadlines[timer]) / interval + 1)
            }
        }
    }
}

// MARK: The rows' workloads on the floor

extension BenchSensorFloor {
    /// The sensor logger (`Workloads.sensor`) on the floor: 50 Hz samples, 10 Hz log
    /// records, 1 Hz summaries and the pipe's reads, all on one thread (the wake-up
    /// floor's own model: QoS set aside); measured as the runtimes' sides are; fails
    /// when its files or pipes cannot be made.
    package static func sensor(_ scale: BenchScale) -> Result<[(String, Double)], BenchFloorError> {
        let log = open("/tmp/ringlet-bench-floor-\(getpid()).log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let summary = open("/tmp/ringlet-bench-floor-\(getpid()).summary", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer {
            close(log); close(summary)
            unlink("/tmp/ringlet-bench-floor-\(getpid()).log")
            unlink("/tmp/ringlet-bench-floor-\(getpid()).summary")
        }
        guard log >= 0, summary >= 0 else { return .failure(BenchFloorError(what: "its files in /tmp", errno: errno)) }
        let timers = BenchWakeupFloor.sensorTimers  // 50, 10 and 1 Hz
        var samples: [Double] = []
        return measure(scale, deviceInterval: 100_000_000) { pipe in
            [BenchFloorBand(timers: [(timers[0], { BenchSensorWork.sample(&samples) }),
                                     (timers[1], { BenchSensorWork.appendRecord(log) }),
                                     (timers[2], { BenchSensorWork.writeSummary(summary) })], pipe: pipe)]
        } figures: { fires in
            [("samples", Double(fires[0][0])), ("log_writes", Double(fires[0][1])),
             ("summary_writes", Double(fires[0][2]))]
        }
    }

    /// The second mix (`Workloads.sensorMix`) on the floor: its six timers and the pipe
    /// (fed every 50 ms) on one thread.
    package static func sensorMix(_ scale: BenchScale) -> Result<[(String, Double)], BenchFloorError> {
        let log = open("/tmp/ringlet-bench-floor-mix-\(getpid()).log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer {
            close(log)
            unlink("/tmp/ringlet-bench-floor-mix-\(getpid()).log")
        }
        guard log >= 0 else { return .failure(BenchFloorError(what: "its file in /tmp", errno: errno)) }
        var histories = Array(repeating: [Double](), count: BenchWakeupFloor.mixTimers.count)
        func timer(_ index: Int) -> (timer: BenchWakeupFloor.Timer, fire: () -> Void) {
            let (timer, appends) = BenchWakeupFloor.mixTimers[index]
            return (timer, appends ? { BenchSensorWork.appendRecord(log) } : { BenchSensorWork.sample(&histories[index]) })
        }
        return measure(scale, deviceInterval: 50_000_000) { pipe in
            [BenchFloorBand(timers: BenchWakeupFloor.mixTimers.indices.map(timer), pipe: pipe)]
        } figures: { fires in
            [("samples", Double(fires.joined().reduce(0, +)))]
        }
    }

    /// Runs `bands` (given the pipe's read end) with a device writing 32 bytes every
    /// `deviceInterval`, measured over `scale.sensorNanoseconds` after 200 ms, as the
    /// runtimes' sides are.
    private static func measure(_ scale: BenchScale, deviceInterval: UInt64, _ bands: (Int32) -> [BenchFloorBand],
                                figures: ([[Int]]) -> [(String, Double)]) -> Result<[(String, Double)], BenchFloorError> {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return .failure(BenchFloorError(what: "its pipe", errno: errno)) }
        defer { close(ends[0]); close(ends[1]) }
        guard fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0 else { return .failure(BenchFloorError(what: "its pipe", errno: errno)) }
        let floor = BenchSensorFloor(bands(ends[0]))
        if let failure = floor.start() { return .failure(BenchFloorError(what: "its stop pipe", errno: failure)) }
        let device = BenchPipeFeeder(fd: ends[1], bytes: 32, intervalNanoseconds: deviceInterval)
        device.start()
        benchSleep(nanoseconds: 200_000_000)  // the first fires and reads: not counted
        let measured = benchMeasureWhileSleeping(nanoseconds: scale.sensorNanoseconds)
        device.stop()
        floor.stop()
        let values = Dictionary(measured, uniquingKeysWith: { a, _ in a })
        let seconds = (values["window_ns"] ?? 1) / 1e9
        return .success(measured + figures(floor.fires) + [
            ("device_reads", Double(floor.reads)), ("device_writes", Double(device.writes)),
            ("wakeups_per_s", (values["switches"] ?? 0) / seconds)])
    }
}

/// What the floor could not make: "its pipe", "its files in /tmp", and the errno.
package struct BenchFloorError: Error, CustomStringConvertible {
    package let what: String
    package let errno: Int32
    package var description: String { "the floor could not make \(what) (errno \(errno))" }
}
