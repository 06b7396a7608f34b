// What the Swift concurrency rows of `ringlet bench` share between the two sides: a
// result handed from a task to the thread that waits for it, and the context switches
// and CPU time of every thread of the process around a piece of work. Imports neither
// Dispatch nor Ringlet.
import Glibc

/// A value a task stores and the waiting thread reads after the task signalled (the
/// side's semaphore orders the two).
package final class BenchBox<Value>: @unchecked Sendable {
    package var value: Value
    package init(_ value: Value) { self.value = value }
}

/// Context switches (voluntary + nonvoluntary, `benchSwitchesBetween`) of every thread
/// of the process — the calling one too — and the process's CPU time while `body` runs.
package func benchMeasureEveryThread(_ body: () -> Void) -> [(String, Double)] {
    let switchesBefore = benchThreadSwitches(excluding: -1)
    let cpuBefore = benchProcessCPUTime()
    let start = benchNow()
    body()
    let elapsed = benchNow() - start
    let cpuAfter = benchProcessCPUTime()
    let switchesAfter = benchThreadSwitches(excluding: -1)
    let cpu = (cpuAfter.user - cpuBefore.user) + (cpuAfter.system - cpuBefore.system)
    return benchSwitchesBetween(switchesBefore, switchesAfter)
        + [("cpu_ns", Double(cpu)), ("window_ns", Double(elapsed))]
}

/// Whether the calling thread is the process's main thread (its id is the process id).
package func benchOnMainThread() -> Bool { benchCurrentThreadID() == Int(getpid()) }

/// A `Duration` in nanoseconds (negative durations stay negative).
package func benchNanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
}

/// The calling thread's name (/proc/thread-self/comm; "" when unreadable): how a side
/// tells a Ringlet pool thread ("ringlet-…") from the toolchain's.
package func benchThreadName() -> String {
    let fd = open("/proc/thread-self/comm", O_RDONLY)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 32)
    let count = read(fd, &bytes, bytes.count)
    return String(decoding: bytes.prefix(max(count, 0)).prefix { $0 != 10 }, as: UTF8.self)
}

/// The task-spawn rows' unit of work: `groups` task groups one after another, each
/// spawning and awaiting `perGroup` child tasks; the nanoseconds it took.
package func benchSpawnGroups(_ groups: Int, perGroup: Int) async -> UInt64 {
    let start = benchNow()
    var sum = 0
    for _ in 0..<groups {
        sum &+= await withTaskGroup(of: Int.self) { group in
            for i in 0..<perGroup { group.addTask { i } }
            var total = 0
            for await value in group { total &+= value }
            return total
        }
    }
    benchKeep(sum)
    return benchNow() - start
}

/// The actor ping-pong rows' far actor.
package actor BenchPong {
    var hits = 0
    package init() {}
    package func hit() -> Int {
        hits &+= 1
        return hits
    }
}

/// The actor ping-pong rows' near actor: `rally(n)` calls into the other `n` times, two
/// hops each (there and back).
package actor BenchPing {
    let pong: BenchPong
    package init(_ pong: BenchPong) { self.pong = pong }

    package func rally(_ roundTrips: Int) async -> Int {
        var last = 0
        for _ in 0..<roundTrips { last = await pong.hit() }
        return last
    }
}
