// What `ringlet bench-energy` shares between its sides: the logger's shape, the lateness
// each side's timers keep, the CPU idle-state reader, and the baseline a C programmer
// writes (one thread per sensor sleeping with clock_nanosleep). Imports neither Dispatch
// nor Ringlet.
import Glibc
import Synchronization

/// The long-running logger of `ringlet bench-energy`: 8 sensors — 2 at 100 Hz, 3 at
/// 10 Hz, 3 at 1 Hz — each read on its own timer with a leeway of a tenth of its interval
/// (or none, for the side that measures what coalescing is worth), and every 30 s a batch
/// of the samples written to a file and `fsync`ed.
package enum BenchEnergyLogger {
    package static let hertz = [100, 100, 10, 10, 10, 1, 1, 1]
    package static let batchNanoseconds: UInt64 = 30_000_000_000

    package static func interval(_ sensor: Int) -> UInt64 { UInt64(1_000_000_000 / hertz[sensor]) }

    /// How late a fire of `sensor` may be on every side: the 10 % leeway, plus 1 ms for
    /// the wake-up itself (as the timers-window row of `ringlet bench`).
    package static func latenessBound(_ sensor: Int) -> UInt64 { interval(sensor) / 10 + 1_000_000 }

    /// The sides, in the order they run.
    package enum Side: String, CaseIterable {
        case ringlet
        case dispatch
        case threads
        case ringletNoLeeway = "ringlet-leeway-0"

        package var title: String {
            switch self {
            case .ringlet: return "Ringlet, leeway 10 %"
            case .dispatch: return "Dispatch, leeway 10 %"
            case .threads: return "a thread per sensor (clock_nanosleep)"
            case .ringletNoLeeway: return "Ringlet, leeway 0"
            }
        }
    }
}

/// Each fire's lateness against its deadline, kept per sensor by the sensor's own handler
/// (no lock: one writer each), summarised once the run ends.
package final class BenchLateness: @unchecked Sendable {
    private var late: [[UInt64]]
    private var early: [Int]

    package init(sensors: Int) {
        late = Array(repeating: [], count: sensors)
        early = Array(repeating: 0, count: sensors)
        for index in 0..<sensors { late[index].reserveCapacity(4096) }
    }

    /// A fire of `sensor` for `deadline` that ran at `now`.
    package func record(sensor: Int, deadline: UInt64, now: UInt64) {
        if now < deadline { early[sensor] += 1 } else { late[sensor].append(now - deadline) }
    }

    /// p50 and p99 lateness over every sensor's fires, the fires past their sensor's
    /// leeway bound (`bound(sensor)`), the early ones, and the count.
    package func summary(bound: (Int) -> UInt64) -> [(String, Double)] {
        var all: [UInt64] = []
        var beyond = 0
        for (sensor, values) in late.enumerated() {
            all += values
            beyond += values.filter { $0 > bound(sensor) }.count
        }
        all.sort()
        func percentile(_ p: Double) -> Double {
            all.isEmpty ? 0 : Double(all[min(all.count - 1, Int(Double(all.count) * p))])
        }
        return [("late_p50_ns", percentile(0.50)), ("late_p99_ns", percentile(0.99)),
                ("late_beyond_bound", Double(beyond)), ("early", Double(early.reduce(0, +))),
                ("fires", Double(all.count + early.reduce(0, +)))]
    }
}

/// CPU idle-state residency from /sys/devices/system/cpu/cpu*/cpuidle/state*/time
/// (microseconds spent in each state since boot), where the kernel has a cpuidle
/// driver; nil otherwise (many virtual machines). Tests give a tree of their own.
package struct BenchIdleResidency {
    /// cpuN/cpuidle/stateK directories, and each state's name.
    package private(set) var states: [(path: String, name: String)] = []

    package init(root: String = "/sys/devices/system/cpu") {
        for cpu in Self.entries(root, prefix: "cpu") where cpu.dropFirst(3).allSatisfy(\.isNumber) {
            let idle = root + "/" + cpu + "/cpuidle"
            for state in Self.entries(idle, prefix: "state") {
                let path = idle + "/" + state
                let name = benchReadFile(path + "/name")?.filter { !$0.isWhitespace } ?? state
                states.append((path, name))
            }
        }
        states.sort { $0.path < $1.path }
    }

    /// Microseconds in each state so far (nil when there is no state or one cannot be read).
    package func read() -> [UInt64]? {
        if states.isEmpty { return nil }
        var values: [UInt64] = []
        for state in states {
            guard let text = benchReadFile(state.path + "/time"), let value = UInt64(text.filter(\.isNumber)) else {
                return nil
            }
            values.append(value)
        }
        return values
    }

    /// Of `windowMicroseconds` × CPUs, the share spent in idle states other than POLL
    /// (a busy loop) between two readings.
    package func idleShare(_ before: [UInt64], _ after: [UInt64], windowMicroseconds: Double, cpus: Int) -> Double {
        var idle: UInt64 = 0
        for (index, state) in states.enumerated() where state.name != "POLL" {
            idle += after[index] &- before[index]
        }
        return Double(idle) / (windowMicroseconds * Double(max(cpus, 1)))
    }

    private static func entries(_ directory: String, prefix: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(prefix) && name.count > prefix.count { names.append(name) }
        }
        return names
    }
}

/// The baseline a C programmer writes: one thread per sensor, each sleeping until its
/// next deadline with clock_nanosleep(TIMER_ABSTIME), no coalescing; the batch on a thread
/// of its own. Runs `nanoseconds`, recording each fire's lateness.
package func benchEnergyThreads(nanoseconds: UInt64, lateness: BenchLateness, batch: @escaping () -> Void) {
    let stop = benchNow() + nanoseconds
    var threads: [pthread_t] = []
    for sensor in BenchEnergyLogger.hertz.indices {
        let interval = BenchEnergyLogger.interval(sensor)
        threads.append(benchStartThread {
            var deadline = benchNow() + interval
            var samples: [Double] = []
            while deadline < stop {
                var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
                lateness.record(sensor: sensor, deadline: deadline, now: benchNow())
                samples.append(Double(benchNow() % 1000))
                if samples.count > 64 { samples.removeFirst(32) }
                deadline += interval
            }
        })
    }
    threads.append(benchStartThread {
        var deadline = benchNow() + BenchEnergyLogger.batchNanoseconds
        while deadline < stop {
            var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
            batch()
            deadline += BenchEnergyLogger.batchNanoseconds
        }
    })
    for thread in threads { pthread_join(thread, nil) }
}

/// Writes `bytes` to `fd` and `fsync`s it: the logger's batch.
package func benchWriteBatch(_ fd: Int32, bytes: Int) {
    let block = [UInt8](repeating: 0x4C, count: bytes)
    _ = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    fsync(fd)
}
