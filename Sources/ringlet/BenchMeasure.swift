// Measurement helpers shared by both sides of `ringlet bench`: clocks, /proc readers,
// the thread-count sampler, percentiles, and running one side of a row in a child
// process. This file imports neither Dispatch nor Ringlet (both define DispatchQueue).
import Glibc
import Histogram
import Synchronization

// MARK: Clocks and sleeping

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func benchNow() -> UInt64 {
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
func benchSleep(nanoseconds: UInt64) {
    var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// Spins until the calling thread has used `cpuNanoseconds` of CPU or `stop` is set.
func benchSpin(cpuNanoseconds: UInt64, stop: borrowing Atomic<Bool>) {
    let end = benchThreadCPUTime() &+ cpuNanoseconds
    var spins = 0
    while benchThreadCPUTime() < end {
        spins &+= 1
        if spins & 63 == 0 && stop.load(ordering: .relaxed) { return }
    }
}

/// Runs `body` `repetitions` times and returns every duration (ns), in order.
func benchRepeat(_ repetitions: Int, _ body: () -> UInt64) -> [UInt64] {
    (0..<max(repetitions, 1)).map { _ in body() }
}

/// Keeps `value` observable so that the optimiser cannot drop the work producing it.
@inline(never)
func benchKeep<T>(_ value: T) { withExtendedLifetime(value) {} }

// MARK: /proc readers

/// Reads a whole (small) file, or nil.
func benchReadFile(_ path: String) -> String? {
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
func benchResidentBytes() -> Int { benchStatusBytes("VmRSS:") }

/// A kB field of /proc/self/status (`VmRSS:`, `VmHWM:` for the peak) in bytes (0 when unreadable).
func benchStatusBytes(_ field: String) -> Int {
    guard let status = benchReadFile("/proc/self/status") else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        let digits = line.dropFirst(field.count).filter { $0.isNumber }
        return (Int(String(digits)) ?? 0) * 1024
    }
    return 0
}

/// Threads of this process now: the entries of /proc/self/task (-1 when unreadable).
func benchThreadCount() -> Int {
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
func benchStartThread(_ body: @escaping () -> Void) -> pthread_t {
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
final class BenchThreadSampler: @unchecked Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let peakCount = Atomic<Int>(0)
    private let samples = Atomic<Int>(0)
    private var thread = pthread_t()
    private var running = false

    func start() {
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
    func sample() {
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
    func stop() -> (peak: Int, samples: Int) {
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

// MARK: The machine

struct BenchMachine {
    var cpus: Int
    var kernel: String
    var cpuModel: String

    static func current() -> BenchMachine {
        let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        var names = utsname()
        uname(&names)
        let kernel = withUnsafeBytes(of: names.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        var model = "unknown CPU"
        if let info = benchReadFile("/proc/cpuinfo") {
            // x86: "model name"; ARM boards: "Model", "Hardware" or "CPU part".
            for key in ["model name", "Model", "Hardware", "cpu model", "CPU part"] {
                if let line = info.split(separator: "\n").first(where: {
                    $0.hasPrefix(key) && $0.dropFirst(key.count).drop { $0 == " " || $0 == "\t" }.first == ":"
                }), let colon = line.firstIndex(of: ":") {
                    model = line[line.index(after: colon)...].trimmingSpaces()
                    break
                }
            }
        }
        return BenchMachine(cpus: cpus, kernel: kernel, cpuModel: model)
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

// MARK: Child processes

/// What one side of one row reported: `key value` lines from the child's stdout.
struct BenchChildResult {
    var values: [String: Double] = [:]
    /// Why the child produced no usable figures (crash, timeout, non-zero exit).
    var failure: String?
    /// What the child wrote to stderr (runtime warnings, trap messages).
    var diagnostics: [String] = []

    subscript(key: String) -> Double? { values[key] }
}

/// The path of this executable (so that the child runs the same binary).
func benchExecutablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if n <= 0 { return CommandLine.arguments[0] }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Runs `executable arguments...` with stdout and stderr captured, kills it after
/// `timeoutSeconds`, and parses `key value` lines from its stdout.
func benchRunChild(_ executable: String, _ arguments: [String], timeoutSeconds: Int) -> BenchChildResult {
    var out: [Int32] = [-1, -1]
    var err: [Int32] = [-1, -1]
    guard pipe(&out) == 0 else { return BenchChildResult(failure: "pipe() failed: errno \(errno)") }
    guard pipe(&err) == 0 else {
        close(out[0]); close(out[1])
        return BenchChildResult(failure: "pipe() failed: errno \(errno)")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, out[1], 1)
    posix_spawn_file_actions_adddup2(&actions, err[1], 2)
    for fd in out + err { posix_spawn_file_actions_addclose(&actions, fd) }

    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for arg in argv { free(arg) } }
    var pid = pid_t()
    let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    close(out[1])
    close(err[1])
    guard rc == 0 else {
        close(out[0]); close(err[0])
        return BenchChildResult(failure: "posix_spawn failed: errno \(rc)")
    }

    var captured: [[UInt8]] = [[], []]
    var open = [true, true]
    let fds = [out[0], err[0]]
    var buffer = [UInt8](repeating: 0, count: 4096)
    let deadline = benchNow() + UInt64(timeoutSeconds) * 1_000_000_000
    var timedOut = false
    while open[0] || open[1] {
        let now = benchNow()
        if now >= deadline { timedOut = true; break }
        var pollers = (0..<2).map { pollfd(fd: open[$0] ? fds[$0] : -1, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&pollers, 2, Int32(min((deadline - now) / 1_000_000 + 1, 1000)))
        if ready <= 0 { continue }
        for i in 0..<2 where open[i] && pollers[i].revents != 0 {
            let n = read(fds[i], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { open[i] = false } else { captured[i].append(contentsOf: buffer[0..<n]) }
        }
    }
    close(out[0])
    close(err[0])
    if timedOut { kill(pid, SIGKILL) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}

    var result = BenchChildResult()
    for line in String(decoding: captured[0], as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: " ")
        if parts.count == 2, let value = Double(parts[1]) { result.values[String(parts[0])] = value }
    }
    result.diagnostics = String(decoding: captured[1], as: UTF8.self).split(separator: "\n").map(String.init)
    let signal = status & 0x7f
    let exitCode = (status >> 8) & 0xff
    if timedOut {
        result.failure = "no result after \(timeoutSeconds) s (killed; hang or deadlock)"
    } else if signal != 0 {
        result.failure = "child died of signal \(signal)" + (signal == SIGILL || signal == SIGTRAP ? " (trap)" : "")
    } else if exitCode != 0 {
        result.failure = "child exited with status \(exitCode)"
    } else if result.values.isEmpty {
        result.failure = "child printed no figures"
    }
    return result
}

/// Prints `key value` lines for the parent (one side of one row).
func benchEmit(_ pairs: [(String, Double)]) {
    for (key, value) in pairs { print("\(key) \(value)") }
    fflush(stdout)
}

// MARK: Shared result shapes

/// Headline `ns` = the best run divided by `units`, plus every run.
func benchPerUnit(_ runs: [UInt64], _ units: Int) -> [(String, Double)] {
    let best = runs.min() ?? 0
    var out = [("ns", Double(best) / Double(units))]
    for (i, run) in runs.enumerated() { out.append(("run\(i + 1)_ns", Double(run) / Double(units))) }
    return out
}

/// A few multiply-xor rounds: the "tiny computation" of the concurrentPerform row.
@inline(__always)
func benchHash(_ x: UInt64) -> UInt64 {
    var h = x &* 0x9E37_79B9_7F4A_7C15
    h ^= h >> 29
    h = h &* 0xBF58_476D_1CE4_E5B9
    h ^= h >> 32
    return h
}

/// p50/p99/max of start latencies (ns).
func benchLatencies(_ latencies: [UInt64]) -> [(String, Double)] {
    let p = benchPercentiles(latencies, [50, 99])
    return [("p50_ns", Double(p[0])), ("p99_ns", Double(p[1])), ("max_ns", Double(latencies.max() ?? 0)),
            ("samples", Double(latencies.count))]
}

/// Timestamps written by items on other threads, one slot each (no two writers share a slot).
struct BenchSlots: @unchecked Sendable {
    let base: UnsafeMutablePointer<UInt64>

    init(count: Int) {
        base = .allocate(capacity: count)
        base.initialize(repeating: 0, count: count)
    }

    subscript(index: Int) -> UInt64 {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }

    func deallocate() { base.deallocate() }
}
