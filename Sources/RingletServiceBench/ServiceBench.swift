import Glibc
@_spi(RingletNet) import Ringlet
import RingletService

enum ServiceBench {
    /// CPU work per request.
    static let workNanoseconds: UInt64 = 1_000_000
    static let warmUp = 20

    static func fail(_ message: String) -> Never {
        let line = Array(("RingletServiceBench: " + message + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(2)
    }

    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }

    static func serve(endpoint: String, options: Set<String>) {
        if options.contains("all-idle") {
            var parameter = sched_param()
            guard sched_setscheduler(0, 5 /* SCHED_IDLE */, &parameter) == 0 else {
                fail("sched_setscheduler(SCHED_IDLE) failed: errno \(errno)")
            }
        }
        if options.contains("clamp") { ServiceImportance.clampProcess(to: .background) }
        let listener: ServiceListener
        do {
            listener = try ServiceListener(endpoint: .abstract(endpoint)) { session in
                session.setMessageHandler { message in
                    spin(cpuNanoseconds: workNanoseconds)
                    var answer: UInt64 = 1
                    try? message.reply(withUnsafeBytes(of: &answer) { DispatchData(bytes: $0) })
                }
            }
        } catch {
            fail("\(error)")
        }
        say("ready threads=\(Runtime.current.statistics.runtimeThreads + 1)")
        withExtendedLifetime(listener) { dispatchMain() }
    }

    static func client(endpoint: String, requests: Int, seconds: Double, serverPID: Int32) {
        let session: ServiceSession
        do {
            session = try ServiceSession(endpoint: .abstract(endpoint))
        } catch {
            fail("\(error)")
        }
        let run = ClientRun(session: session, requests: requests, seconds: seconds, serverPID: serverPID)
        DispatchQueue(label: "bench.client", qos: .userInteractive).async { run.next() }
        guard run.done.wait(timeout: .now() + seconds + 60) == .success else { fail("the run did not end") }
        say(run.report())
        session.cancel()
    }

    /// Spins until the calling thread has used `cpuNanoseconds` of CPU.
    static func spin(cpuNanoseconds: UInt64) {
        let end = threadCPU() + cpuNanoseconds
        while threadCPU() < end {}
    }

    static func threadCPU() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// One request at a time: each reply handler sends the next.
final class ClientRun: @unchecked Sendable {
    let session: ServiceSession
    let requests: Int
    let deadlineNanoseconds: UInt64
    let serverPID: Int32
    let done = DispatchSemaphore(value: 0)
    private var sent = 0
    private var startedAt: UInt64 = 0
    private var roundTrips: [UInt64] = []
    private var measuredFrom: UInt64 = 0
    private var cpuBefore: (client: UInt64, server: UInt64) = (0, 0)
    private var failure: String?
    private let payload = [UInt8](repeating: 1, count: 64).withUnsafeBytes { DispatchData(bytes: $0) }

    init(session: ServiceSession, requests: Int, seconds: Double, serverPID: Int32) {
        self.session = session
        self.requests = requests
        deadlineNanoseconds = UInt64(seconds * 1e9)
        self.serverPID = serverPID
        roundTrips.reserveCapacity(requests)
    }

    /// Runs on the client queue, then in each reply handler (one at a time).
    func next() {
        if sent == ServiceBench.warmUp {
            measuredFrom = ServiceBench.now()
            cpuBefore = (ProcessCPU.own(), ProcessCPU.of(serverPID))
        }
        let measured = sent - ServiceBench.warmUp
        if measured >= requests || (measured > 0 && ServiceBench.now() - measuredFrom > deadlineNanoseconds) {
            done.signal()
            return
        }
        sent += 1
        startedAt = ServiceBench.now()
        session.send(payload) { [self] result in
            let elapsed = ServiceBench.now() - startedAt
            if case .failure(let error) = result {
                failure = "\(error)"
                done.signal()
                return
            }
            if sent > ServiceBench.warmUp { roundTrips.append(elapsed) }
            next()
        }
    }

    func report() -> String {
        if let failure { ServiceBench.fail("a request failed: \(failure)") }
        let wall = ServiceBench.now() - measuredFrom
        let cpu = (ProcessCPU.own() - cpuBefore.client) + (ProcessCPU.of(serverPID) - cpuBefore.server)
        let sorted = roundTrips.sorted()
        func percentile(_ p: Double) -> UInt64 {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        let count = max(sorted.count, 1)
        return "result done=\(sorted.count) p50_us=\(percentile(0.5) / 1000) p99_us=\(percentile(0.99) / 1000)"
            + " msgs_per_s=\(UInt64(Double(sorted.count) / (Double(wall) / 1e9)))"
            + " cpu_us_per_msg=\(cpu / UInt64(count) / 1000)"
            + " client_threads=\(ProcessCPU.threads(of: getpid())) server_threads=\(ProcessCPU.threads(of: serverPID))"
            + " client_runtime_threads=\(Runtime.current.statistics.runtimeThreads + 1)"
    }
}

/// CPU time and thread counts from /proc.
enum ProcessCPU {
    static func own() -> UInt64 { of(getpid()) }

    /// utime + stime of `pid`, in nanoseconds (0 when unreadable).
    static func of(_ pid: Int32) -> UInt64 {
        guard let text = read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime 14 and stime 15 (1-based) → 11, 12 here.
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return 0 }
        let ticks = UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) * 1_000_000_000 / ticks
    }

    static func threads(of pid: Int32) -> Int {
        guard let text = read("/proc/\(pid)/status") else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst(8).trimmingPrefix(while: { $0 == " " || $0 == "\t" })) ?? -1
        }
        return -1
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
