// The Ringlet side of `make bench-service`: a background-clamped service and an urgent
// client, as two processes that DispatchServiceBench (the driver) starts.
//
//   RingletServiceBench serve  ENDPOINT [clamp] [all-idle]
//   RingletServiceBench client ENDPOINT REQUESTS SECONDS SERVER_PID
//
// The service does about 1 ms of CPU work per request (thread CPU time, so contention
// stretches it in wall time) and answers 8 bytes. `clamp` clamps the service to
// background (its requests are then boosted); `all-idle` puts every thread of the
// process in SCHED_IDLE before the runtime starts (the service simply at background).
// The client sends one request at a time from a user-interactive queue and prints one
// `result` line of key=value pairs.
import Glibc
@_spi(RingletNet) import Ringlet
import RingletService

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    ServiceBench.fail("usage: RingletServiceBench serve ENDPOINT [clamp] [all-idle] | client ENDPOINT REQUESTS SECONDS SERVER_PID")
}
switch arguments[1] {
case "serve":
    ServiceBench.serve(endpoint: arguments[2], options: Set(arguments.dropFirst(3)))
case "client" where arguments.count == 6:
    ServiceBench.client(endpoint: arguments[2], requests: Int(arguments[3]) ?? 1000,
                        seconds: Double(arguments[4]) ?? 30, serverPID: Int32(arguments[5]) ?? 0)
default:
    ServiceBench.fail("unknown mode '\(arguments[1])' or wrong arguments")
}
