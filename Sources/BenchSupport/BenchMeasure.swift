// Measurement helpers shared by both sides of `ringlet bench` (and by `ringlet soak`):
// clocks, /proc readers, the thread-count sampler, percentiles and the result shapes
// the workloads return. This file imports neither Dispatch nor Ringlet (both define
// DispatchQueue). What runs inside a timed region is `@inlinable`, so that it costs
// the workloads in their own modules what it cost them when they shared this one.
import Glibc
import Histogram
import Synchronization

// MARK: Clocks and sleeping

/// CLOCK_MONOTONIC in nanoseconds.
@inlinable @inline(__always)
package func benchNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// CPU time consumed by the calling thread, in nanoseconds.
@inline(__always)
func benchThreadCPUTime() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Sleeps the calling thread for `nanoseconds` (a blocking syscall the runtimes can't see).
package func benchSleep(nanoseconds: UInt64) {
    var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// Spins until the calling thread has used `cpuNanoseconds` of CPU or `stop` is set.
package func benchSpin(cpuNanoseconds: UInt64, stop: borrowing Atomic<Bool>) {
    let end = benchThreadCPUTime() &+ cpuNanoseconds
    var spins = 0
    while benchThreadCPUTime() < end {
        spins &+= 1
        if spins & 63 == 0 && stop.load(ordering: .relaxed) { return }
    }
}

/// Runs `body` `repetitions` times and returns every duration (ns), in order.
package func benchRepeat(_ repetitions: Int, _ body: () -> UInt64) -> [UInt64] {
    (0..<max(repetitions, 1)).map { _ in body() }
}

/// Keeps `value` observable so that the optimiser cannot drop the work producing it.
@inline(never)
package func benchKeep<T>(_ value: T) { withExtendedLifetime(value) {} }

// MARK: /proc readers

/// Reads a whole (small) file, or nil.
package func benchReadFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// VmRSS of this process in bytes (0 when unreadable).
package func benchResidentBytes() -> Int { benchStatusBytes("VmRSS:") }

/// A kB field of /proc/self/status (`VmRSS:`, `VmHWM:` for the peak) in bytes (0 when unreadable).
package func benchStatusBytes(_ field: String) -> Int {
    guard let status = benchReadFile("/proc/self/status") else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        let digits = line.dropFirst(field.count).filter { $0.isNumber }
        return (Int(String(digits)) ?? 0) * 1024
    }
    return 0
}

/// Threads of this process now: the entries of /proc/self/task (-1 when unreadable).
package func benchThreadCount() -> Int {
    guard let dir = opendir("/proc/self/task") else { return -1 }
    defer { closedir(dir) }
    var count = 0
    while let entry = readdir(dir) {
        let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
        if first != UInt8(ascii: ".") { count += 1 }
    }
    return count
}

/// Runs `body` on a new plain thread (not a runtime's); join it with pthread_join.
package func benchStartThread(_ body: @escaping () -> Void) -> pthread_t {
    final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { raw in
        Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, Unmanaged.passRetained(Box(body)).toOpaque())
    precondition(rc == 0, "pthread_create failed: \(rc)")
    return thread
}

/// Samples the process's thread count every millisecond on its own thread and keeps
/// the peak. The sampler itself is one of the threads counted.
package final class BenchThreadSampler: @unchecked Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let peakCount = Atomic<Int>(0)
    private let samples = Atomic<Int>(0)
    private var thread = pthread_t()
    private var running = false

    package init() {}

    package func start() {
        thread = benchStartThread { self.loop() }
        running = true
        // Wait for the first sample so that the sampler is counted from now on.
        while samples.load(ordering: .acquiring) == 0 { sched_yield() }
    }

    private func loop() {
        while !stopFlag.load(ordering: .relaxed) {
            sample()
            benchSleep(nanoseconds: 1_000_000)
        }
        sample()
    }

    /// Takes one sample now (also callable from other threads).
    package func sample() {
        let n = benchThreadCount()
        var seen = peakCount.load(ordering: .relaxed)
        while n > seen {
            let (exchanged, original) = peakCount.compareExchange(expected: seen, desired: n, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
        samples.wrappingAdd(1, ordering: .releasing)
    }

    /// Stops the sampler thread and returns (peak, samples taken).
    package func stop() -> (peak: Int, samples: Int) {
        if running {
            stopFlag.store(true, ordering: .relaxed)
            pthread_join(thread, nil)
            running = false
        }
        return (peakCount.load(ordering: .relaxed), samples.load(ordering: .relaxed))
    }
}

// MARK: Percentiles

/// Percentiles of `values` (nanoseconds) from an HdrHistogram with 3 significant digits.
func benchPercentiles(_ values: [UInt64], _ percentiles: [Double]) -> [UInt64] {
    var histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000_000, numberOfSignificantValueDigits: .three)
    for value in values { _ = histogram.record(max(value, 1)) }
    return percentiles.map { histogram.valueAtPercentile($0) }
}

// MARK: Shared result shapes

/// Headline `ns` = the best run divided by `units`, plus every run.
package func benchPerUnit(_ runs: [UInt64], _ units: Int) -> [(String, Double)] {
    let best = runs.min() ?? 0
    var out = [("ns", Double(best) / Double(units))]
    for (i, run) in runs.enumerated() { out.append(("run\(i + 1)_ns", Double(run) / Double(units))) }
    return out
}

/// A few multiply-xor rounds: the "tiny computation" of the concurrentPerform row.
@inlinable @inline(__always)
package func benchHash(_ x: UInt64) -> UInt64 {
    var h = x &* 0x9E37_79B9_7F4A_7C15
    h ^= h >> 29
    h = h &* 0xBF58_476D_1CE4_E5B9
    h ^= h >> 32
    return h
}

/// p50/p99/max of start latencies (ns).
package func benchLatencies(_ latencies: [UInt64]) -> [(String, Double)] {
    let p = benchPercentiles(latencies, [50, 99])
    return [("p50_ns", Double(p[0])), ("p99_ns", Double(p[1])), ("max_ns", Double(latencies.max() ?? 0)),
            ("samples", Double(latencies.count))]
}

/// Timestamps written by items on other threads, one slot each (no two writers share a slot).
///
/// `public`, not `package` like the rest of this module: Swift 6.3 does not inline a
/// `package` subscript's accessors into another module even when `@inlinable`, and the
/// latency row writes a slot in every measured item.
public struct BenchSlots: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<UInt64>

    public init(count: Int) {
        base = .allocate(capacity: count)
        base.initialize(repeating: 0, count: count)
    }

    @inlinable
    public subscript(index: Int) -> UInt64 {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }

    public func deallocate() { base.deallocate() }
}
