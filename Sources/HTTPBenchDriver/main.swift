// `make bench-http`: the same Hummingbird routes served three ways, each loaded by wrk over
// loopback at 16, 64 and 256 connections for a bounded time:
//   (a) Hummingbird's own server on NIOPosix's MultiThreadedEventLoopGroup, NIO's defaults
//   (b) the same with the group's thread count set to Ringlet's pool size
//   (c) RingletHello: the routes on RingletNIO (Ringlet's loops and ring)
// Per run: requests/s, latency p50/p99 (wrk --latency), the server's peak thread count
// (sampled from /proc every 50 ms; the kernel's io_uring workers apart) and CPU time per
// request (/proc/<pid>/stat), then
// Ringlet's ratios to (b). wrk shares the machine's cores with the server. Then an echo
// row: a TCP echo server on each side, 16 blocking client threads sending 64-byte and
// 64 KiB messages and reading them back.
//
//   HTTPBenchDriver --bin DIR [--seconds N] [--connections 16,64,256] [--routes /,/json]
#if Hummingbird
import Foundation

struct Side {
    let name: String
    let executable: String
    let arguments: [String]
}

struct Figures {
    var requestsPerSecond = 0.0
    var p50 = "?", p99 = "?"
    var p50Microseconds = 0.0, p99Microseconds = 0.0
    var requests = 0
    var errors = ""
    var peakThreads = 0
    var peakKernelWorkers = 0
    var cpuSeconds = 0.0
    var cpuMicrosecondsPerRequest: Double { requests > 0 ? cpuSeconds * 1e6 / Double(requests) : 0 }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write("bench-http: \(message)\n".data(using: .utf8)!)
    exit(1)
}

var binDirectory = "", seconds = 10, connections = [16, 64, 256], routes = ["/", "/json"]
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
    switch argument {
    case "--bin": binDirectory = value
    case "--seconds": seconds = Int(value) ?? { fail("--seconds takes a number of seconds") }()
    case "--connections":
        connections = value.split(separator: ",").map { Int($0) ?? { fail("--connections takes numbers: 16,64,256") }() }
    case "--routes": routes = value.split(separator: ",").map(String.init)
    default: fail("unknown argument \(argument); it takes --bin DIR --seconds N --connections 16,64,256 --routes /,/json")
    }
}
if binDirectory.isEmpty { fail("--bin names the directory of RingletHello and NIOHelloBench") }
guard let wrk = ["/usr/bin/wrk", "/usr/local/bin/wrk"].first(where: FileManager.default.isExecutableFile) else {
    fail("wrk is not installed: apt-get install wrk (make bench-http installs it)")
}
let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

/// A server process and the port it printed.
final class Server {
    let process = Process()
    let port: Int
    let echoPort: Int?
    let firstLine: String

    init(_ side: Side, echo: Bool = false) {
        process.executableURL = URL(fileURLWithPath: side.executable)
        process.arguments = side.arguments + ["--port", "0"] + (echo ? ["--echo-port", "0"] : [])
        let output = Pipe()
        process.standardOutput = output
        do { try process.run() } catch { fail("cannot start \(side.executable): \(error)") }
        // It says "...: echo on 127.0.0.1:PORT" (with --echo-port), then
        // "...: serving http://127.0.0.1:PORT/ ...".
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("serving") || !text.hasSuffix("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty || Date() > deadline {
                process.terminate()
                fail("\(side.name) did not say it was serving within 30 s: \(text)")
            }
            text += String(decoding: chunk, as: UTF8.self)
        }
        func portNamed(after marker: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.contains(marker) }),
                  let range = line.range(of: "127.0.0.1:") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        firstLine = text.split(separator: "\n").first { $0.contains("serving") }.map(String.init) ?? ""
        guard let port = portNamed(after: "serving") else { fail("\(side.name) names no port: \(text)") }
        self.port = port
        echoPort = portNamed(after: "echo on")
    }

    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state(0) ... utime(11) stime(12).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / ticksPerSecond
    }

    /// The process's threads: its own, and the kernel's io_uring workers ("iou-wrk-N",
    /// which the kernel starts for requests it cannot complete inline), apart.
    var threads: (own: Int, kernel: Int) {
        let tasks = "/proc/\(process.processIdentifier)/task"
        guard let ids = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return (0, 0) }
        var own = 0, kernel = 0
        for id in ids {
            // A thread gone between the listing and this read (the kernel's io_uring
            // workers come and go) is not counted.
            guard let name = try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8) else { continue }
            if name.hasPrefix("iou-wrk") { kernel += 1 } else { own += 1 }
        }
        return (own, kernel)
    }

    func stop() {
        process.interrupt()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// wrk's figures from its --latency output.
func runWrk(port: Int, route: String, connections: Int, seconds: Int) -> (Figures, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: wrk)
    process.arguments = ["-t", "2", "-c", "\(connections)", "-d", "\(seconds)s", "--timeout", "5s", "--latency",
                         "http://127.0.0.1:\(port)\(route)"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    do { try process.run() } catch { fail("cannot run wrk: \(error)") }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var figures = Figures()
    for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        if line.hasPrefix("Requests/sec:"), words.count > 1 { figures.requestsPerSecond = Double(words[1]) ?? 0 }
        if line.hasPrefix("50%"), words.count > 1 { figures.p50 = String(words[1]); figures.p50Microseconds = microseconds(words[1]) }
        if line.hasPrefix("99%"), words.count > 1 { figures.p99 = String(words[1]); figures.p99Microseconds = microseconds(words[1]) }
        if line.contains("requests in"), let count = Int(words[0]) { figures.requests = count }
        if line.hasPrefix("Socket errors") || line.hasPrefix("Non-2xx") { figures.errors += line + " " }
    }
    return (figures, text)
}

/// "1.23ms" → 1230.
func microseconds(_ text: Substring) -> Double {
    let units: [(String, Double)] = [("us", 1), ("ms", 1000), ("s", 1_000_000)]
    for (suffix, scale) in units where text.hasSuffix(suffix) {
        return (Double(text.dropLast(suffix.count)) ?? 0) * scale
    }
    return 0
}

func measure(_ side: Side, route: String, connections: Int) -> Figures {
    let server = Server(side)
    defer { server.stop() }
    _ = runWrk(port: server.port, route: route, connections: connections, seconds: 1)  // warm-up
    let peak = NSLock()
    var peakThreads = server.threads.own, peakKernel = server.threads.kernel
    var sampling = true
    let sampler = Thread {
        while peak.withLock({ sampling }) {
            let now = server.threads
            peak.withLock {
                peakThreads = max(peakThreads, now.own)
                peakKernel = max(peakKernel, now.kernel)
            }
            usleep(50_000)
        }
    }
    sampler.start()
    let cpuBefore = server.cpuSeconds
    var (figures, text) = runWrk(port: server.port, route: route, connections: connections, seconds: seconds)
    figures.cpuSeconds = server.cpuSeconds - cpuBefore
    peak.withLock { sampling = false }
    figures.peakThreads = peak.withLock { peakThreads }
    figures.peakKernelWorkers = peak.withLock { peakKernel }
    if figures.requests == 0 { fail("wrk got no answer from \(side.name) on \(route):\n\(text)") }
    return figures
}

/// `connections` clients, each a thread with a blocking socket, send `size` bytes and read
/// them back, again and again, for `seconds`: round trips and their latencies.
func echoLoad(port: Int, connections: Int, size: Int, seconds: Int) -> (trips: Int, latencies: [Double]) {
    let lock = NSLock()
    var all: [Double] = []
    let done = DispatchGroup()
    let deadline = Date().addingTimeInterval(Double(seconds))
    for _ in 0..<connections {
        done.enter()
        Thread {
            defer { done.leave() }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if connected != 0 { fail("echo client: connect to 127.0.0.1:\(port): errno \(errno)") }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let message = [UInt8](repeating: 0x5a, count: size)
            var reply = [UInt8](repeating: 0, count: size)
            var latencies: [Double] = []
            while Date() < deadline {
                let start = DispatchTime.now().uptimeNanoseconds
                var sent = 0
                while sent < size {
                    let n = message.withUnsafeBytes { send(fd, $0.baseAddress! + sent, size - sent, 0) }
                    if n <= 0 { fail("echo client: send: errno \(errno)") }
                    sent += n
                }
                var received = 0
                while received < size {
                    let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + received, size - received, 0) }
                    if n <= 0 { fail("echo client: the server closed or failed (errno \(errno)) mid-echo") }
                    received += n
                }
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
            }
            lock.withLock { all += latencies }
        }.start()
    }
    done.wait()
    return (all.count, all.sorted())
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

// Ringlet's pool size, for side (b): RingletHello says it when it starts.
let ringletSide = Side(name: "Ringlet (RingletNIO)", executable: binDirectory + "/RingletHello", arguments: [])
let probe = Server(ringletSide)
let poolLine = probe.firstLine
probe.stop()
guard let poolRange = poolLine.range(of: "pool "),
      let poolSize = Int(poolLine[poolRange.upperBound...].prefix { $0.isNumber }) else {
    fail("RingletHello did not name its pool size: \(poolLine)")
}
let sides = [
    Side(name: "(a) NIO, default loops", executable: binDirectory + "/NIOHelloBench", arguments: ["--loops", "0"]),
    Side(name: "(b) NIO, \(poolSize) loops", executable: binDirectory + "/NIOHelloBench", arguments: ["--loops", "\(poolSize)"]),
    Side(name: "(c) Ringlet", executable: ringletSide.executable, arguments: []),
]

print("make bench-http: \(seconds) s per run, wrk -t2 over loopback (wrk shares the \(ProcessInfo.processInfo.activeProcessorCount) "
      + "cores with the server); Ringlet: \(poolLine)")
var misses: [String] = []
for route in routes {
    for count in connections {
        print("\nroute \(route), \(count) connections")
        print("side".padding(toLength: 26, withPad: " ", startingAt: 0) + "   req/s      p50       p99   threads (+io_uring workers)  CPU µs/req")
        var results: [Figures] = []
        for side in sides {
            let figures = measure(side, route: route, connections: count)
            results.append(figures)
            print(side.name.padding(toLength: 26, withPad: " ", startingAt: 0)
                  + String(format: "%8.0f %8@ %9@ %9d (+%d) %20.1f", figures.requestsPerSecond, figures.p50 as NSString,
                           figures.p99 as NSString, figures.peakThreads, figures.peakKernelWorkers,
                           figures.cpuMicrosecondsPerRequest)
                  + (figures.errors.isEmpty ? "" : "  " + figures.errors))
        }
        let baseline = results[1], ringlet = results[2]
        let throughput = ringlet.requestsPerSecond / max(baseline.requestsPerSecond, 1)
        let tail = ringlet.p99Microseconds / max(baseline.p99Microseconds, 1)
        let cpu = ringlet.cpuMicrosecondsPerRequest / max(baseline.cpuMicrosecondsPerRequest, 0.001)
        print(String(format: "Ringlet / (b): requests/s %.2f (target >= 1.0) %@, p99 %.2f (target <= 1.0) %@, CPU per request %.2f (target < 1.0) %@, threads %d",
                     throughput, throughput >= 1 ? "met" : "MISS", tail, tail <= 1 ? "met" : "MISS",
                     cpu, cpu < 1 ? "met" : "MISS", ringlet.peakThreads))
        if throughput < 1 { misses.append("\(route) \(count): requests/s \(String(format: "%.2f", throughput))") }
        if tail > 1 { misses.append("\(route) \(count): p99 \(String(format: "%.2f", tail))") }
        if cpu >= 1 { misses.append("\(route) \(count): CPU \(String(format: "%.2f", cpu))") }
    }
}
// The echo row: 16 connections, 64-byte and 64 KiB messages.
let echoConnections = 16
for size in [64, 65_536] {
    print("\necho, \(size)-byte messages, \(echoConnections) connections (each a blocking client thread)")
    print("side".padding(toLength: 26, withPad: " ", startingAt: 0) + " trips/s   p50 µs   p99 µs   threads (+io_uring workers)  CPU µs/trip")
    var rates: [Double] = [], tails: [Double] = [], costs: [Double] = []
    for side in sides {
        let server = Server(side, echo: true)
        guard let echoPort = server.echoPort else { fail("\(side.name) did not start its echo server") }
        _ = echoLoad(port: echoPort, connections: echoConnections, size: size, seconds: 1)  // warm-up
        let cpuBefore = server.cpuSeconds
        let result = echoLoad(port: echoPort, connections: echoConnections, size: size, seconds: seconds)
        let cpu = server.cpuSeconds - cpuBefore
        let threads = server.threads
        server.stop()
        let rate = Double(result.trips) / Double(seconds)
        let cost = result.trips > 0 ? cpu * 1e6 / Double(result.trips) : 0
        rates.append(rate); tails.append(percentile(result.latencies, 0.99)); costs.append(cost)
        print(side.name.padding(toLength: 26, withPad: " ", startingAt: 0)
              + String(format: "%8.0f %8.0f %8.0f %9d (+%d) %20.1f", rate, percentile(result.latencies, 0.5),
                       percentile(result.latencies, 0.99), threads.own, threads.kernel, cost))
    }
    let throughput = rates[2] / max(rates[1], 1), tail = tails[2] / max(tails[1], 1), cpu = costs[2] / max(costs[1], 0.001)
    print(String(format: "Ringlet / (b): trips/s %.2f (target >= 1.0) %@, p99 %.2f (target <= 1.0) %@, CPU per trip %.2f (target < 1.0) %@",
                 throughput, throughput >= 1 ? "met" : "MISS", tail, tail <= 1 ? "met" : "MISS", cpu, cpu < 1 ? "met" : "MISS"))
    if throughput < 1 { misses.append("echo \(size): trips/s \(String(format: "%.2f", throughput))") }
    if tail > 1 { misses.append("echo \(size): p99 \(String(format: "%.2f", tail))") }
    if cpu >= 1 { misses.append("echo \(size): CPU \(String(format: "%.2f", cpu))") }
}
print(misses.isEmpty ? "\nbench-http: every target met" : "\nbench-http: missed: " + misses.joined(separator: "; "))
#else
print("HTTPBenchDriver is built with the package's Hummingbird trait: run it with `make bench-http`")
#endif
