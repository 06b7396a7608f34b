// What the timer rows of `ringlet bench` share between the two sides: the log a timer's
// handler writes, lateness statistics, CPU time from getrusage(2) and package energy
// from RAPL. Imports neither Dispatch nor Ringlet.
import Glibc

// MARK: The fires of one timer

/// The fires of one repeating timer, written by its event handler only (a source never
/// runs its handler concurrently with itself) and read once the source is cancelled.
///
/// A handler run covers `data` fires (more than 1 when fires coalesced); it is judged
/// against the newest deadline it covers, `first + (fires + data - 1) × interval`, and
/// is inside the window when it ran in [deadline, deadline + leeway + 1 ms].
package final class BenchTimerLog: @unchecked Sendable {
    let first: UInt64
    let interval: UInt64
    let leeway: UInt64
    /// Fires after which the log stops recording (Int.max: never).
    let limit: Int
    /// Fires counted so far (the sum of `data`).
    private(set) var fires = 0
    /// Per handler run: ns after its deadline (negative: early).
    private(set) var lateness: [Int64] = []
    /// Fires that shared a handler run with a later one (sum of `data - 1`).
    private(set) var coalesced = 0

    package init(first: UInt64, interval: UInt64, leeway: UInt64, expectedRuns: Int, limit: Int = .max) {
        self.first = first
        self.interval = interval
        self.leeway = leeway
        self.limit = limit
        lateness.reserveCapacity(expectedRuns)
    }

    /// Records one handler run; returns true once, on the run that reaches `limit`.
    package func record(data: UInt, now: UInt64) -> Bool {
        if fires >= limit { return false }
        let covered = max(Int(data), 1)
        let deadline = first &+ UInt64(fires + covered - 1) &* interval
        lateness.append(Int64(bitPattern: now &- deadline))
        coalesced += covered - 1
        fires += covered
        return fires >= limit
    }
}

/// Fires, window counts and lateness percentiles of `logs` (all with the same leeway):
/// `outside_window` = handler runs early or later than leeway + 1 ms.
package func benchTimerSummary(_ logs: [BenchTimerLog]) -> [(String, Double)] {
    let slack: Int64 = 1_000_000
    var runs = 0
    var early = 0
    var late = 0
    var fires = 0
    var coalesced = 0
    var latenesses: [UInt64] = []
    var worst: Int64 = 0
    for log in logs {
        runs += log.lateness.count
        fires += log.fires
        coalesced += log.coalesced
        for value in log.lateness {
            if value < 0 { early += 1 } else if value > Int64(log.leeway) + slack { late += 1 }
            latenesses.append(UInt64(max(value, 0)))
            worst = max(worst, value)
        }
    }
    let p = benchPercentiles(latenesses, [50, 99])
    return [("outside_window", Double(early + late)), ("early", Double(early)), ("late", Double(late)),
            ("runs", Double(runs)), ("fires", Double(fires)), ("coalesced", Double(coalesced)),
            ("p50_ns", Double(p[0])), ("p99_ns", Double(p[1])), ("max_ns", Double(worst))]
}

// MARK: CPU time

/// User and system CPU time of the whole process (every thread), in nanoseconds.
package func benchProcessCPUTime() -> (user: UInt64, system: UInt64) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_usec) &* 1000 }
    return (ns(usage.ru_utime), ns(usage.ru_stime))
}

// MARK: Energy (RAPL)

/// The RAPL package domains, /sys/class/powercap/intel-rapl:N — or amd-rapl:N, the name
/// some kernels give AMD Zen's packages (others serve Zen as intel-rapl:N too); the
/// "…:N:M" subdomains are parts of a package and would count twice, and
/// "intel-rapl-mmio:N" repeats a package through another interface. Since Linux 5.10
/// energy_uj is readable by root only (CVE-2020-8694): `read()` then gives nil.
package struct BenchEnergyMeter {
    package var packages: [String] = []

    /// `root`: the powercap directory (tests give a directory of their own).
    package init(root: String = "/sys/class/powercap") {
        guard let dir = opendir(root) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if (name.hasPrefix("intel-rapl:") || name.hasPrefix("amd-rapl:")) && name.split(separator: ":").count == 2 {
                packages.append(root + "/" + name)
            }
        }
        closedir(dir)
        packages.sort()
    }

    /// energy_uj of every package, or nil when there is none or one can't be read.
    package func read() -> [UInt64]? {
        if packages.isEmpty { return nil }
        var values: [UInt64] = []
        for package in packages {
            guard let text = benchReadFile(package + "/energy_uj"),
                  let value = UInt64(text.filter { $0.isNumber }) else { return nil }
            values.append(value)
        }
        return values
    }

    /// µJ used between two readings, summed over packages; a counter that wrapped
    /// (at max_energy_range_uj) is unwrapped.
    func microjoulesBetween(_ before: [UInt64], _ after: [UInt64]) -> UInt64 {
        var total: UInt64 = 0
        for (i, package) in packages.enumerated() {
            if after[i] >= before[i] {
                total += after[i] - before[i]
            } else {
                let range = benchReadFile(package + "/max_energy_range_uj")
                    .flatMap { UInt64($0.filter { $0.isNumber }) }
                total += (range ?? before[i]) - before[i] + after[i]
            }
        }
        return total
    }
}

// MARK: The measured window

/// While the calling thread sleeps `nanoseconds`: the context switches of every other
/// thread (as the idle-wakeups row counts them), the process's CPU time and, when RAPL
/// is readable, the packages' energy. `energy_available` is 0 when it is not.
package func benchMeasureWhileSleeping(nanoseconds: UInt64) -> [(String, Double)] {
    let meter = BenchEnergyMeter()
    let me = benchCurrentThreadID()
    let switchesBefore = benchThreadSwitches(excluding: me)
    let cpuBefore = benchProcessCPUTime()
    let energyBefore = meter.read()
    let start = benchNow()
    benchSleep(nanoseconds: nanoseconds)
    let elapsed = benchNow() - start
    let energyAfter = meter.read()
    let cpuAfter = benchProcessCPUTime()
    let switchesAfter = benchThreadSwitches(excluding: me)
    let user = cpuAfter.user - cpuBefore.user
    let system = cpuAfter.system - cpuBefore.system
    var out = benchSwitchesBetween(switchesBefore, switchesAfter)
        + [("cpu_ns", Double(user + system)), ("cpu_user_ns", Double(user)), ("cpu_sys_ns", Double(system)),
           ("window_ns", Double(elapsed)), ("rapl_packages", Double(meter.packages.count))]
    if let energyBefore, let energyAfter {
        out += [("energy_uj", Double(meter.microjoulesBetween(energyBefore, energyAfter))), ("energy_available", 1)]
    } else {
        out.append(("energy_available", 0))
    }
    return out
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline` (at once when it has passed).
package func benchSleep(until deadline: UInt64) {
    let now = benchNow()
    if deadline > now { benchSleep(nanoseconds: deadline - now) }
}
