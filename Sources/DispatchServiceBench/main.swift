// `make bench-service`: the driver, and the baseline — the same service and client over
// a plain Unix SOCK_SEQPACKET socket and the toolchain's Dispatch.
//
//   DispatchServiceBench run REQUESTS SECONDS   the whole comparison (starts the others)
//   DispatchServiceBench serve ENDPOINT [interactive]  the baseline service (its work on a
//                                               background queue, or a user-interactive one)
//   DispatchServiceBench client ENDPOINT REQUESTS SECONDS SERVER_PID
//   DispatchServiceBench hog                    one CPU hog at nice 0, until killed
import Foundation

let arguments = CommandLine.arguments
switch (arguments.count > 1 ? arguments[1] : "", arguments.count) {
case ("run", 4):
    BenchDriver(requests: Int(arguments[2]) ?? 1000, seconds: Double(arguments[3]) ?? 20).run()
case ("serve", 3), ("serve", 4):
    PlainService.serve(endpoint: arguments[2], interactive: arguments.count == 4 && arguments[3] == "interactive")
case ("client", 6):
    PlainClient.run(endpoint: arguments[2], requests: Int(arguments[3]) ?? 1000, seconds: Double(arguments[4]) ?? 20,
                    serverPID: Int32(arguments[5]) ?? 0)
case ("hog", 2):
    while true { hogSink &+= 1 }
default:
    FileHandle.standardError.write("usage: DispatchServiceBench run REQUESTS SECONDS | serve ENDPOINT | client ENDPOINT REQUESTS SECONDS SERVER_PID | hog\n".data(using: .utf8)!)
    exit(2)
}

nonisolated(unsafe) var hogSink = 0
