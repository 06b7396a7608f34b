import Dispatch
import Foundation

/// The baseline: a Unix SOCK_SEQPACKET service whose requests are read by a read source
/// and handled on a background queue (a background service, as Dispatch writes one), and
/// a client that sends one request at a time from a user-interactive queue and blocks
/// in recv for the reply.
enum PlainSocket {
    static func address(_ endpoint: String) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array(endpoint.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path[0] = 0  // abstract
            for (index, byte) in name.prefix(path.count - 1).enumerated() { path[index + 1] = byte }
        }
        let length = MemoryLayout<sa_family_t>.size + 1 + min(name.count, 107)
        return (address, socklen_t(length))
    }

    /// A SOCK_SEQPACKET socket bound or connected (`call`) to the abstract `endpoint`.
    static func open(_ endpoint: String, _ name: String,
                     _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        check(fd, "socket")
        var (address, length) = PlainSocket.address(endpoint)
        check(withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, length) }
        }, name)
        return fd
    }

    static func check(_ result: Int32, _ call: String) {
        if result < 0 {
            FileHandle.standardError.write("DispatchServiceBench: \(call) failed: errno \(errno)\n".data(using: .utf8)!)
            exit(2)
        }
    }
}

enum PlainService {
    static func serve(endpoint: String, interactive: Bool) {
        let listener = PlainSocket.open(endpoint, "bind", bind)
        PlainSocket.check(listen(listener, 16), "listen")
        let work = DispatchQueue(label: "service.work", qos: interactive ? .userInteractive : .background)
        let accepts = DispatchSource.makeReadSource(fileDescriptor: listener, queue: work)
        var connections: [DispatchSourceRead] = []
        accepts.setEventHandler {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let reads = DispatchSource.makeReadSource(fileDescriptor: connection, queue: work)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            reads.setEventHandler {
                let count = recv(connection, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count <= 0 {
                    if count == 0 || (errno != EAGAIN && errno != EINTR) { reads.cancel(); close(connection) }
                    return
                }
                spin(cpuNanoseconds: 1_000_000)
                var answer: UInt64 = 1
                _ = send(connection, &answer, 8, Int32(MSG_NOSIGNAL))
            }
            reads.resume()
            connections.append(reads)
        }
        accepts.resume()
        print("ready threads=0")
        fflush(stdout)
        dispatchMain()
    }
}

enum PlainClient {
    static func run(endpoint: String, requests: Int, seconds: Double, serverPID: Int32) {
        let fd = PlainSocket.open(endpoint, "connect", connect)
        let finished = DispatchSemaphore(value: 0)
        let result = ResultLine()
        DispatchQueue(label: "bench.client", qos: .userInteractive).async {
            var payload = [UInt8](repeating: 1, count: 64)
            var answer = [UInt8](repeating: 0, count: 64)
            var roundTrips: [UInt64] = []
            var start: UInt64 = 0
            var cpuBefore: (UInt64, UInt64) = (0, 0)
            for index in 0..<(requests + 20) {
                if index == 20 {
                    start = now()
                    cpuBefore = (ProcessStat.cpu(getpid()), ProcessStat.cpu(serverPID))
                }
                if index > 20 && now() - start > UInt64(seconds * 1e9) { break }
                let began = now()
                _ = send(fd, &payload, payload.count, Int32(MSG_NOSIGNAL))
                let count = recv(fd, &answer, answer.count, 0)
                if count <= 0 { break }
                if index >= 20 { roundTrips.append(now() - began) }
            }
            let wall = now() - start
            let cpu = (ProcessStat.cpu(getpid()) - cpuBefore.0) + (ProcessStat.cpu(serverPID) - cpuBefore.1)
            let sorted = roundTrips.sorted()
            func percentile(_ p: Double) -> UInt64 { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
            result.text = "result done=\(sorted.count) p50_us=\(percentile(0.5) / 1000) p99_us=\(percentile(0.99) / 1000)"
                + " msgs_per_s=\(UInt64(Double(sorted.count) / (Double(wall) / 1e9)))"
                + " cpu_us_per_msg=\(cpu / UInt64(max(sorted.count, 1)) / 1000)"
                + " client_threads=\(ProcessStat.threads(getpid())) server_threads=\(ProcessStat.threads(serverPID))"
                + " client_runtime_threads=0"
            finished.signal()
        }
        finished.wait()
        print(result.text)
        fflush(stdout)
        close(fd)
    }
}

/// The client's line, written by its queue before the semaphore the main thread waits on.
final class ResultLine: @unchecked Sendable {
    var text = ""
}

func spin(cpuNanoseconds: UInt64) {
    let end = threadCPU() + cpuNanoseconds
    while threadCPU() < end {}
}

func threadCPU() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

enum ProcessStat {
    static func cpu(_ pid: Int32) -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return 0 }
        return (user + system) * 1_000_000_000 / UInt64(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func threads(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst(8).trimmingCharacters(in: .whitespaces)) ?? -1
        }
        return -1
    }
}
