// The Swift concurrency rows of `ringlet bench`: task groups, actors, Task.sleep,
// blocking tasks and hops to the main actor. In BenchWorkloadsRinglet the tasks run on
// Ringlet's executor (installed when the child was loaded: the Architecture article); in
// BenchWorkloadsDispatch on the toolchain's default executor, in a child that never starts
// Ringlet and keeps the toolchain's executors (RINGLET_SWIFT_CONCURRENCY=toolchain).
#if BENCH_RINGLET
import Ringlet
#elseif BENCH_DISPATCH
import Dispatch
#else
#error("Sources/BenchWorkloads is compiled only through BenchWorkloadsDispatch and BenchWorkloadsRinglet")
#endif
import BenchSupport
import Glibc

extension Workloads {
    /// Runs `body` in a detached task and blocks the calling (main) thread until it ends.
    static func waitFor<T>(_ initial: T, _ body: @escaping @Sendable () async -> T) -> T {
        let box = BenchBox(initial)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value
    }

    /// ns per child task: `scale.spawnTasks` tasks returning their index, spawned and
    /// awaited `scale.tasksPerGroup` at a time in task groups, one group after another.
    static func taskSpawn(_ scale: BenchScale) -> [(String, Double)] {
        let perGroup = scale.tasksPerGroup
        let groups = max(scale.spawnTasks / perGroup, 1)
        func once(_ groups: Int) -> UInt64 {
            waitFor(0) { await benchSpawnGroups(groups, perGroup: perGroup) }
        }
        _ = once(max(groups / 10, 1))
        let runs = benchRepeat(scale.concurrencyRepetitions) { once(groups) }
        return benchPerUnit(runs, groups * perGroup) + concurrencyExecutor()
    }

    /// ns per hop between two actors: one awaits a method of the other in a loop.
    static func actorPingPong(_ scale: BenchScale) -> [(String, Double)] {
        let ping = BenchPing(BenchPong())
        func once(_ roundTrips: Int) -> UInt64 {
            waitFor(0) {
                let start = benchNow()
                benchKeep(await ping.rally(roundTrips))
                return benchNow() - start
            }
        }
        let n = scale.actorRoundTrips
        _ = once(n / 10)
        let runs = benchRepeat(scale.concurrencyRepetitions) { once(n) }
        return benchPerUnit(runs, 2 * n) + concurrencyExecutor()
    }

    /// `scale.sleepingTasks` tasks each sleeping `scale.taskSleeps` times (50 ms with
    /// 10 ms tolerance): the context switches of every thread and the CPU time meanwhile,
    /// how long each sleep lasted (`short_sleeps`: ended before its duration), lateness
    /// (`beyond_tolerance`: later than tolerance + 1 ms).
    static func taskSleep(_ scale: BenchScale) -> [(String, Double)] {
        let tasks = scale.sleepingTasks
        let sleeps = scale.taskSleeps
        let duration = Duration.nanoseconds(Int64(scale.taskSleepNanoseconds))
        let tolerance = Duration.nanoseconds(Int64(scale.taskSleepToleranceNanoseconds))
        let lasted = BenchBox([Int64]())
        let measured = benchMeasureEveryThread {
            lasted.value = waitFor([]) {
                await withTaskGroup(of: [Int64].self) { group in
                    for _ in 0..<tasks {
                        group.addTask {
                            var mine: [Int64] = []
                            mine.reserveCapacity(sleeps)
                            let clock = ContinuousClock()
                            for _ in 0..<sleeps {
                                let before = clock.now
                                try? await Task.sleep(for: duration, tolerance: tolerance, clock: clock)
                                mine.append(benchNanoseconds(before.duration(to: clock.now)))
                            }
                            return mine
                        }
                    }
                    var all: [Int64] = []
                    all.reserveCapacity(tasks * sleeps)
                    for await mine in group { all += mine }
                    return all
                }
            }
        }
        let wanted = Int64(scale.taskSleepNanoseconds)
        let short = lasted.value.filter { $0 < wanted }
        let lateness = lasted.value.map { UInt64(max($0 - wanted, 0)) }
        let slack = scale.taskSleepToleranceNanoseconds + 1_000_000
        return measured + benchLatencies(lateness).map { ("late_" + $0.0, $0.1) } + [
            ("sleeps", Double(lasted.value.count)), ("short_sleeps", Double(short.count)),
            ("beyond_tolerance", Double(lateness.filter { $0 > slack }.count)),
            ("shortest_ns", Double(lasted.value.min() ?? 0))] + concurrencyExecutor()
    }

    /// `scale.blockingTasks` tasks in a task group that each block in nanosleep for
    /// `scale.blockingNanoseconds`: the wall time (the child samples the peak threads).
    static func taskThreads(_ scale: BenchScale) -> [(String, Double)] {
        let nanoseconds = scale.blockingNanoseconds
        let tasks = scale.blockingTasks
        let wall = waitFor(UInt64(0)) {
            let start = benchNow()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<tasks { group.addTask { benchSleep(nanoseconds: nanoseconds) } }
            }
            return benchNow() - start
        }
        return [("wall_ns", Double(wall))] + concurrencyExecutor()
    }

    /// Latency of hops from a pool task to the main actor (`MainActor.run`), the main
    /// thread in `dispatchMain()`; prints the figures and ends the process, as the main
    /// thread never returns.
    static func mainActorHops(_ scale: BenchScale) -> Never {
        let n = scale.mainActorHops
        Task.detached {
            for _ in 0..<n / 10 { _ = await MainActor.run { benchNow() } }
            var latencies: [UInt64] = []
            latencies.reserveCapacity(n)
            let cpuBefore = benchProcessCPUTime()
            let wallBefore = benchNow()
            for _ in 0..<n {
                let sent = benchNow()
                let ran = await MainActor.run { benchNow() }
                latencies.append(ran &- sent)
            }
            let wall = benchNow() &- wallBefore
            let cpuAfter = benchProcessCPUTime()
            let cpu = (cpuAfter.user &+ cpuAfter.system) &- (cpuBefore.user &+ cpuBefore.system)
            let onMain = await MainActor.run { benchOnMainThread() }
            let out = benchLatencies(latencies) + [("ran_on_main_thread", onMain ? 1 : 0)]
                + [("cpu_ns", Double(cpu)), ("wall_ns", Double(wall))]
                + concurrencyExecutor() + runtimeStatistics() + [("threads_after", Double(benchThreadCount()))]
            for (key, value) in out { print("\(key) \(value)") }
            fflush(stdout)
            endProcess()
        }
        dispatchMain()
    }
}
