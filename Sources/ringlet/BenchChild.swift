// The parent's side of `ringlet bench`: the machine it describes, running one side of a
// row in a child process of this binary and reading back its `key value` lines.
// Imports neither Dispatch nor Ringlet (both define DispatchQueue).
import BenchSupport
import Glibc

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
/// `timeoutSeconds`, and parses `key value` lines from its stdout. The Dispatch side's
/// child gets RINGLET_SWIFT_CONCURRENCY=toolchain: this binary links Ringlet, whose
/// executors are otherwise Swift concurrency's from load, and that side's baseline must
/// be the toolchain's executor.
func benchRunChild(_ executable: String, _ arguments: [String], side: BenchSide,
                   timeoutSeconds: Int) -> BenchChildResult {
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
    var environment: [UnsafeMutablePointer<CChar>?] = []
    var index = 0
    while let entry = environ[index] {
        if !String(cString: entry).hasPrefix("RINGLET_SWIFT_CONCURRENCY=") { environment.append(entry) }
        index += 1
    }
    let keep = side == .dispatch ? strdup("RINGLET_SWIFT_CONCURRENCY=toolchain") : nil
    defer { free(keep) }
    if let keep { environment.append(keep) }
    environment.append(nil)
    let rc = posix_spawn(&pid, executable, &actions, nil, argv, environment)
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

