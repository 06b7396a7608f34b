// Context switches per thread from /proc, for the idle wake-ups and timers rows of
// `ringlet bench`. Imports neither Dispatch nor Ringlet.
import Glibc

// MARK: Context switches

/// The kernel's id of the calling thread, from /proc/thread-self ("PID/task/TID"; Linux
/// 3.17+); without it, the process id, which is the main thread's id.
func benchCurrentThreadID() -> Int {
    var buffer = [CChar](repeating: 0, count: 256)
    let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard n > 0 else { return Int(getpid()) }
    let link = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return link.split(separator: "/").last.flatMap { Int($0) } ?? Int(getpid())
}

/// voluntary_ctxt_switches + nonvoluntary_ctxt_switches of every thread of this process
/// except the one with id `excluded`, by thread id (threads whose status can't be read
/// — they exited meanwhile — are left out).
func benchThreadSwitches(excluding excluded: Int) -> [Int: (voluntary: Int, nonvoluntary: Int)] {
    guard let dir = opendir("/proc/self/task") else { return [:] }
    var ids: [Int] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if let id = Int(name), id != excluded { ids.append(id) }
    }
    closedir(dir)
    var switches: [Int: (voluntary: Int, nonvoluntary: Int)] = [:]
    for id in ids {
        guard let status = benchReadFile("/proc/self/task/\(id)/status") else { continue }
        var voluntary = 0
        var nonvoluntary = 0
        for line in status.split(separator: "\n") {
            // "nonvoluntary_..." does not have the prefix "voluntary_".
            if line.hasPrefix("voluntary_ctxt_switches:") {
                voluntary = Int(String(line.filter { $0.isNumber })) ?? 0
            } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                nonvoluntary = Int(String(line.filter { $0.isNumber })) ?? 0
            }
        }
        switches[id] = (voluntary, nonvoluntary)
    }
    return switches
}

/// The idle-wakeups row, after the side has started its runtime, run its warm-up items
/// and waited for them: settles 200 ms, then counts the context switches of every
/// thread but the calling one while the calling thread sleeps `nanoseconds` in
/// nanosleep (see `benchSwitchesBetween`).
package func benchIdleWakeups(nanoseconds: UInt64) -> [(String, Double)] {
    benchSleep(nanoseconds: 200_000_000)
    let me = benchCurrentThreadID()
    let before = benchThreadSwitches(excluding: me)
    let start = benchNow()
    benchSleep(nanoseconds: nanoseconds)
    let elapsed = benchNow() - start
    let after = benchThreadSwitches(excluding: me)
    return benchSwitchesBetween(before, after) + [("idle_ns", Double(elapsed))]
}

/// The context switches between two readings of `benchThreadSwitches`. A thread
/// present at both readings counts its difference; a thread created meanwhile counts
/// all its switches; a thread that exited meanwhile counts 1 (it woke at least to
/// exit; its own count is gone with it). With an unchanged set of threads this is the
/// difference of the two sums.
func benchSwitchesBetween(_ before: [Int: (voluntary: Int, nonvoluntary: Int)],
                          _ after: [Int: (voluntary: Int, nonvoluntary: Int)]) -> [(String, Double)] {
    var voluntary = 0
    var nonvoluntary = 0
    var woken = 0
    var busiest = 0
    for (id, now) in after {
        let then = before[id] ?? (0, 0)
        let v = max(now.voluntary - then.voluntary, 0)
        let n = max(now.nonvoluntary - then.nonvoluntary, 0)
        voluntary += v
        nonvoluntary += n
        if v + n > 0 { woken += 1 }
        busiest = max(busiest, v + n)
    }
    let exited = before.keys.filter { after[$0] == nil }.count
    let created = after.keys.filter { before[$0] == nil }.count
    return [("switches", Double(voluntary + nonvoluntary + exited)), ("voluntary", Double(voluntary)),
            ("nonvoluntary", Double(nonvoluntary)), ("threads_watched", Double(before.count)),
            ("threads_woken", Double(woken)), ("threads_exited", Double(exited)),
            ("threads_created", Double(created)), ("busiest_thread_switches", Double(busiest))]
}
