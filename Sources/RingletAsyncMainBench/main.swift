import BenchSupport
import Glibc
import Ringlet

// The async-main rows of `ringlet bench`: Swift concurrency in a program whose main is
// `async` and that only imports Ringlet, as people write one. Both sides run this same
// program; the parent gives the Dispatch side RINGLET_SWIFT_CONCURRENCY=toolchain, so its
// tasks stay on the toolchain's executor, while the Ringlet side's run on the executors
// Ringlet installed at load (the runtime starts on the first task). Started with the
// workload's name (`async-main-task-spawn`, `async-main-actor-ping-pong`,
// `async-main-task-threads`) and `--quick`; prints `key value` lines for the parent.

let arguments = CommandLine.arguments.dropFirst()
let scale = arguments.contains("--quick") ? BenchScale.quick : BenchScale.full
let toolchainSide = String(cString: getenv("RINGLET_SWIFT_CONCURRENCY") ?? strdup("")!) == "toolchain"

func emit(_ pairs: [(String, Double)]) {
    for (key, value) in pairs { print("\(key) \(value)") }
    fflush(nil)
}

func fail(_ message: String) -> Never {
    let line = Array("async-main bench: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    fflush(nil)
    exit(3)
}

/// Checks that this side's tasks run where they should, so that neither column
/// silently measures the other's executor.
func checkExecutor() async {
    let onRinglet = await Task.detached { benchThreadName().hasPrefix("ringlet-") }.value
    if toolchainSide && onRinglet { fail("a task ran on Ringlet's pool with RINGLET_SWIFT_CONCURRENCY=toolchain") }
    if !toolchainSide && (!onRinglet || !Runtime.current.runsSwiftConcurrency) {
        fail("a task of this async main ran off Ringlet's pool: Ringlet's executors were not installed at load")
    }
}

/// The best of `scale.concurrencyRepetitions` runs (after one warm-up), as `ns` per unit.
func timed(units: Int, warmUp: () async -> UInt64, _ run: () async -> UInt64) async -> [(String, Double)] {
    _ = await warmUp()
    var runs: [UInt64] = []
    for _ in 0..<scale.concurrencyRepetitions { runs.append(await run()) }
    return benchPerUnit(runs, units)
}

let sampler = BenchThreadSampler()
sampler.start()
let threadsBefore = benchThreadCount()
var out: [(String, Double)] = []
switch arguments.first ?? "" {
case "async-main-task-spawn":
    await checkExecutor()
    let perGroup = scale.tasksPerGroup
    let groups = max(scale.spawnTasks / perGroup, 1)
    out = await timed(units: groups * perGroup, warmUp: { await benchSpawnGroups(max(groups / 10, 1), perGroup: perGroup) }) {
        await benchSpawnGroups(groups, perGroup: perGroup)
    }
case "async-main-actor-ping-pong":
    await checkExecutor()
    let ping = BenchPing(BenchPong())
    let n = scale.actorRoundTrips
    func once(_ roundTrips: Int) async -> UInt64 {
        let start = benchNow()
        benchKeep(await ping.rally(roundTrips))
        return benchNow() - start
    }
    out = await timed(units: 2 * n, warmUp: { await once(n / 10) }) { await once(n) }
case "async-main-task-threads":
    let start = benchNow()
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<scale.blockingTasks { group.addTask { benchSleep(nanoseconds: scale.blockingNanoseconds) } }
    }
    out = [("wall_ns", Double(benchNow() - start))]
    await checkExecutor()
default:
    fail("unknown workload '\(arguments.first ?? "")'")
}
sampler.sample()
let (peak, samples) = sampler.stop()
out += [("peak", Double(peak)), ("threads_before", Double(threadsBefore - 1)), ("samples", Double(samples)),
        ("concurrency_on_ringlet", toolchainSide ? 0 : 1)]
emit(out)
exit(0)
