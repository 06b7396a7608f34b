import Foundation

/// Runs every side of `make bench-service` and prints the table: the Ringlet service
/// uncontended, boosted under load, simply at background under load; the plain-socket
/// Dispatch service uncontended and under load. Load: one CPU hog at nice 0 per core.
struct BenchDriver {
    let requests: Int
    let seconds: Double
    let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

    struct Side {
        let name: String
        let program: String
        let serveArguments: [String]
        let hogs: Bool
    }

    struct Row {
        let side: Side
        var values: [String: UInt64]
        subscript(key: String) -> UInt64 { values[key] ?? 0 }
    }

    func run() {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let capSysNice = Self.hasCapSysNice()
        print("bench-service: \(requests) requests of ~1 ms of CPU each, one at a time, from a user-interactive queue;"
            + " load = \(cores) CPU hog(s) at nice 0; CAP_SYS_NICE \(capSysNice ? "held" : "dropped");"
            + " a loaded run stops after \(Int(seconds)) s")
        let ringlet = "RingletServiceBench", dispatch = "DispatchServiceBench"
        let sides = [
            Side(name: "Ringlet, uncontended", program: ringlet, serveArguments: ["clamp"], hogs: false),
            Side(name: "Ringlet, boosted, loaded", program: ringlet, serveArguments: ["clamp"], hogs: true),
            Side(name: "Ringlet, service at background, loaded", program: ringlet, serveArguments: ["all-idle"], hogs: true),
            Side(name: "Dispatch plain socket, uncontended", program: dispatch, serveArguments: [], hogs: false),
            Side(name: "Dispatch plain socket, background queue, loaded", program: dispatch, serveArguments: [], hogs: true),
            Side(name: "Dispatch plain socket, user-interactive queue, loaded", program: dispatch,
                 serveArguments: ["interactive"], hogs: true),
        ]
        var rows: [Row] = []
        for (index, side) in sides.enumerated() {
            rows.append(Row(side: side, values: measure(side, endpoint: "ringlet-bench-service.\(getpid()).\(index)", cores: cores)))
        }
        printTable(rows)
    }

    private func measure(_ side: Side, endpoint: String, cores: Int) -> [String: UInt64] {
        let hogs = side.hogs ? (0..<cores).map { _ in start("DispatchServiceBench", ["hog"]) } : []
        defer { hogs.forEach { $0.terminate(); $0.waitUntilExit() } }
        let serverOutput = Pipe()
        let server = start(side.program, ["serve", endpoint] + side.serveArguments, output: serverOutput)
        defer { server.terminate(); server.waitUntilExit() }
        guard let ready = readLine(serverOutput), ready.hasPrefix("ready") else {
            fatalError("bench-service: \(side.name): the service did not start")
        }
        let serverRuntimeThreads = UInt64(ready.split(separator: "=").last.map(String.init) ?? "0") ?? 0
        let clientOutput = Pipe()
        let client = start(side.program, ["client", endpoint, "\(requests)", "\(seconds)", "\(server.processIdentifier)"],
                           output: clientOutput)
        let line = readLine(clientOutput) ?? ""
        client.waitUntilExit()
        guard line.hasPrefix("result") else { fatalError("bench-service: \(side.name): the client printed '\(line)'") }
        var values: [String: UInt64] = ["server_runtime_threads": serverRuntimeThreads]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=")
            if parts.count == 2 { values[String(parts[0])] = UInt64(parts[1]) ?? 0 }
        }
        return values
    }

    private func start(_ program: String, _ arguments: [String], output: Pipe? = nil) -> Process {
        let process = Process()
        process.executableURL = folder.appendingPathComponent(program)
        process.arguments = arguments
        if let output { process.standardOutput = output }
        do { try process.run() } catch { fatalError("bench-service: could not start \(program): \(error)") }
        return process
    }

    private func readLine(_ pipe: Pipe) -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = pipe.fileHandleForReading.readData(ofLength: 1)
            if chunk.isEmpty { break }
            if chunk[0] == UInt8(ascii: "\n") { break }
            bytes.append(chunk[0])
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    private func printTable(_ rows: [Row]) {
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        print(pad("side", 56) + pad("done", 7) + pad("p50 µs", 9) + pad("p99 µs", 10) + pad("msgs/s", 9)
            + pad("CPU µs/msg", 12) + "threads (client/server; runtime's)")
        for row in rows {
            let runtimeThreads = row.side.program == "RingletServiceBench"
                ? " (\(row["client_runtime_threads"])/\(row["server_runtime_threads"]))" : ""
            print(pad(row.side.name, 56) + pad("\(row["done"])", 7) + pad("\(row["p50_us"])", 9) + pad("\(row["p99_us"])", 10)
                + pad("\(row["msgs_per_s"])", 9) + pad("\(row["cpu_us_per_msg"])", 12)
                + "\(row["client_threads"])/\(row["server_threads"])" + runtimeThreads)
        }
        let uncontended = rows[0], boosted = rows[1], background = rows[2], plain = rows[3], plainAtNice0 = rows[5]
        func ratio(_ a: UInt64, _ b: UInt64) -> String { b == 0 ? "n/a" : String(format: "%.2f", Double(a) / Double(b)) }
        func verdict(_ pass: Bool) -> String { pass ? "pass" : "MISS" }
        let withinUncontended = Double(boosted["p99_us"]) <= 3 * Double(max(uncontended["p50_us"], 1))
        let againstBackground = Double(boosted["p99_us"]) <= 0.1 * Double(background["p99_us"])
        let throughput = Double(uncontended["msgs_per_s"]) >= Double(plain["msgs_per_s"])
        let extraThreads = (rows[0...2].contains {
            $0["client_threads"] != $0["client_runtime_threads"] || $0["server_threads"] != $0["server_runtime_threads"]
        })
        print("boosted p99 / uncontended round trip (p50): \(ratio(boosted["p99_us"], uncontended["p50_us"])) (target ≤ 3): "
            + verdict(withinUncontended))
        print("boosted p99 / the plain socket's nice-0 service's p99 under the same load: "
            + "\(ratio(boosted["p99_us"], plainAtNice0["p99_us"])) (what the kernel gives a nice-0 thread beside nice-0 hogs)")
        print("boosted p99 / unboosted p99: \(ratio(boosted["p99_us"], background["p99_us"])) (target ≤ 0.1): "
            + verdict(againstBackground) + (background["done"] < UInt64(requests) ? " (the unboosted run stopped after \(background["done"]) requests)" : ""))
        print("throughput Ringlet / plain socket, uncontended: \(ratio(uncontended["msgs_per_s"], plain["msgs_per_s"])) (target ≥ 1.0): "
            + verdict(throughput) + "; CPU per message \(ratio(uncontended["cpu_us_per_msg"], plain["cpu_us_per_msg"]))× the plain socket's")
        print("threads beyond Ringlet's own (either process, every Ringlet side): " + (extraThreads ? "some: MISS" : "none: pass"))
    }

    /// Whether this process may raise priorities (CAP_SYS_NICE in its effective set).
    static func hasCapSysNice() -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return false }
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let hex = line.dropFirst(7).trimmingCharacters(in: .whitespaces)
            return ((UInt64(hex, radix: 16) ?? 0) >> 23) & 1 == 1
        }
        return false
    }
}
