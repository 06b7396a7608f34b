import Ringlet

// RingletDemo: a small program that uses nothing but Ringlet — the board-sized
// counterpart of `ringlet demo`. Built by SwiftPM on the host and, in Embedded Swift
// mode for aarch64, by `make cross`; `make sim` runs it on an emulated board and
// measures its size and memory there. Every wait is bounded, so it never hangs.
//
// It starts the runtime itself, with the configuration derived from the machine it runs
// on, so `make cross` links it without board selection (the BoardProfiles article,
// "What a program carries"): it reads no RINGLET_BOARD and no profile.

let started = DispatchTime.now()
let deadline = started + .seconds(20)

/// Milliseconds since the program started.
func elapsedMilliseconds() -> Int {
    Int((DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000)
}

/// Ends the program with status 1 after saying which step did not finish in time.
func fail(_ step: String) -> Never {
    print("ringlet-demo: \(step) timed out")
    Runtime.exit(status: 1)
}

do throws(RuntimeError) {
    try Runtime.start(configuration: .derived())
} catch {
    print("ringlet-demo: the runtime could not start: \(error)")
    Runtime.exit(status: 1)
}
let pool = Runtime.statistics
print("ringlet-demo: \(pool.workers) workers, \(pool.reserve) reserve, \(pool.managerThreads) manager")

// 1. A serial queue owns a running total: 1000 items, in order, then one sync read.
let ledger = DispatchQueue(label: "demo.ledger", qos: .utility)
nonisolated(unsafe) var total = 0  // touched only on `ledger`
for value in 1...1000 { ledger.async { total += value } }
let sum = ledger.sync { total }
print("serial queue: 1000 items summed to \(sum)")

// 2. A concurrent queue and a group: eight chunks summed in parallel, results kept
// by the serial queue (the only place that touches `chunkSums`).
let workers = DispatchQueue(label: "demo.workers", qos: .userInitiated, attributes: .concurrent)
let chunks = DispatchGroup()
nonisolated(unsafe) var chunkSums = [Int](repeating: 0, count: 8)  // only on `ledger`
for chunk in 0..<8 {
    workers.async(group: chunks) {
        var partial = 0
        for value in (chunk * 10_000)..<((chunk + 1) * 10_000) { partial &+= value % 7 }
        let result = partial
        ledger.async(group: chunks) { chunkSums[chunk] = result }
    }
}
if chunks.wait(timeout: deadline) != .success { fail("the group") }
print("concurrent queue + group: 8 chunks, total \(ledger.sync { chunkSums.reduce(0, +) })")

// 3. A semaphore hands five values from a background producer to this thread.
let ready = DispatchSemaphore(value: 0)
nonisolated(unsafe) var produced = 0  // only on `ledger`
DispatchQueue.global(qos: .background).async {
    for _ in 0..<5 { ledger.sync { produced += 1 }; ready.signal() }
}
for _ in 0..<5 where ready.wait(timeout: deadline) != .success { fail("the semaphore") }
print("semaphore: received \(ledger.sync { produced }) signals from a background producer")

// 4. A one-shot timer: asyncAfter, never early.
let fired = DispatchSemaphore(value: 0)
let asked = DispatchTime.now()
nonisolated(unsafe) var lateness = 0  // written before `fired` is signalled, read after
DispatchQueue.global(qos: .userInitiated).asyncAfter(deadline: asked + .milliseconds(50)) {
    lateness = Int((DispatchTime.now().uptimeNanoseconds - asked.uptimeNanoseconds) / 1_000_000) - 50
    fired.signal()
}
if fired.wait(timeout: deadline) != .success { fail("asyncAfter") }
print("asyncAfter: 50 ms timer fired \(lateness) ms late")

// 5. A repeating timer source: five ticks 20 ms apart, then cancelled.
let ticks = DispatchQueue(label: "demo.ticks", qos: .default)
nonisolated(unsafe) let timer = DispatchSource.makeTimerSource(queue: ticks)  // Dispatch's sources are not Sendable
let ticked = DispatchSemaphore(value: 0)
nonisolated(unsafe) var tickCount = 0  // only on `ticks`
timer.setEventHandler {
    tickCount += Int(timer.data)
    if tickCount >= 5 { timer.cancel() }
}
timer.setCancelHandler { ticked.signal() }
timer.schedule(deadline: .now() + .milliseconds(20), repeating: .milliseconds(20), leeway: .milliseconds(2))
timer.activate()
if ticked.wait(timeout: deadline) != .success { fail("the timer source") }
print("timer source: \(ticks.sync { tickCount }) ticks, then cancelled")

// 6. QoS: what ran at each class.
let ran = Runtime.statistics.itemsRunPerQoS
print("items run per QoS: userInteractive \(ran.userInteractive), userInitiated \(ran.userInitiated), "
    + "default \(ran.default), utility \(ran.utility), background \(ran.background)")

// 7. Idle for 300 ms, so a supervisor (the simulator's init) can read the resting RSS.
print("ringlet-demo: done in \(elapsedMilliseconds()) ms; idling 300 ms")
_ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(300))
Runtime.exit(status: 0)
