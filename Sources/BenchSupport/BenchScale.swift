// The rows of `ringlet bench` and the sizes of their workloads: what the workloads
// (Sources/BenchWorkloads) and the table (Sources/ringlet/BenchRows.swift) both read.
// Imports neither Dispatch nor Ringlet.

/// One row of the table; the raw value names it on the command line (`--only`, `--child`).
package enum BenchRow: String, CaseIterable {
    case serialAsync = "serial-async"
    case serialAsyncGroup = "serial-async-group"
    case serialAsyncProducers = "serial-async-producers"
    /// serial-async with Ringlet's trace timeline on (`RINGLET_TRACE`): what tracing costs.
    case serialAsyncTraced = "serial-async-traced"
    case pingPong = "ping-pong"
    case sync = "sync"
    case concurrentPerform = "concurrent-perform"
    /// The next two rows read one workload (`workload`): items that block in the kernel.
    case threads = "threads"
    case blockingWall = "blocking-wall"
    case latency = "latency"
    /// Strict QoS as a user would try it: background items that spin and then sleep for
    /// zero (`usleep(0)`) over and over, user-interactive items arriving meanwhile.
    case latencyYieldingFlood = "latency-yielding-flood"
    case memory = "memory"
    /// The memory row as a user writes it: labelled queues on one suspended target,
    /// plain empty closures (no group).
    case memoryLabelled = "memory-labelled"
    case idleWakeups = "idle-wakeups"
    /// The next four rows read one workload (`workload`): repeating timers on a serial queue.
    case timers = "timers"
    case timersWindow = "timers-window"
    case timersCPU = "timers-cpu"
    case energy = "energy"
    case strictLateness = "strict-lateness"
    /// The next four rows read one workload (`workload`): DispatchIO on a file and a pipe.
    case ioSequential = "io-seq-read"
    case ioRandom = "io-random-read"
    case ioPipe = "io-pipe"
    case ioThreads = "io-threads"
    /// Swift concurrency: Ringlet's executor against the toolchain's default executor
    /// (the Dispatch side's child never starts Ringlet, so its tasks run on the toolchain's).
    case taskSpawn = "task-spawn"
    case actorPingPong = "actor-ping-pong"
    case taskSleep = "task-sleep"
    case taskThreads = "task-threads"
    /// The same three in a program whose main is async and that only imports Ringlet
    /// (Sources/RingletAsyncMainBench): Ringlet's executors installed at load.
    case asyncMainTaskSpawn = "async-main-task-spawn"
    case asyncMainActorPingPong = "async-main-actor-ping-pong"
    case asyncMainTaskThreads = "async-main-task-threads"
    /// The next two rows read one workload (`workload`): hops from the pool to `@MainActor`.
    case mainActorP50 = "main-actor-p50"
    case mainActorP99 = "main-actor-p99"
    /// The next three rows read one workload (`workload`): a sensor-style data logger.
    case sensorCPU = "sensor-cpu"
    case sensorWakeups = "sensor-wakeups"
    case sensorEnergy = "sensor-energy-estimate"
    /// The next two rows read one workload: a second sensor mix, as a new user would try.
    case sensorMixCPU = "sensor-mix-cpu"
    case sensorMixWakeups = "sensor-mix-wakeups"
}

/// Sizes of the workloads (`--quick` shrinks them for smoke runs).
package struct BenchScale {
    /// Empty items async onto one serial queue (all producers together).
    package var serialItems: Int
    /// Producer threads of the serial-async-producers row.
    package var serialProducers = 4
    /// Hops between two serial queues.
    package var hops: Int
    /// `sync {}` calls from one thread.
    package var syncCalls: Int
    /// `concurrentPerform` iterations.
    package var performIterations: Int
    /// Timed repetitions per micro-benchmark (the best counts), after one warm-up.
    package var repetitions: Int
    /// Items that each block, and how long each blocks.
    package var blockingItems: Int
    package var blockingNanoseconds: UInt64
    /// Background items flooding the pool, and the CPU time each spins (at most).
    package var floodItems: Int
    package var floodCPUNanoseconds: UInt64
    /// User-interactive items measured, and the gap between their submissions.
    package var interactiveItems: Int
    package var interactiveGapNanoseconds: UInt64
    /// The yielding flood's slice of CPU between two `usleep(0)`, and the gap between
    /// its user-interactive items.
    package var yieldingSliceNanoseconds: UInt64 = 1_000_000
    package var yieldingGapNanoseconds: UInt64 = 5_000_000
    /// Queues (each holding `pendingPerQueue` items) for the memory rows.
    package var queues: Int
    package var pendingPerQueue: Int
    /// How long the idle-wakeups row watches the idle runtime's threads.
    package var idleNanoseconds: UInt64
    /// Repeating timers of the timers rows, their interval and leeway, and how long
    /// their context switches, CPU time and energy are measured.
    package var timers: Int
    package var timerIntervalNanoseconds: UInt64
    package var timerLeewayNanoseconds: UInt64
    package var timersNanoseconds: UInt64
    /// Fires of the `.strict` timer (leeway 0) of the strict-lateness row, and its interval.
    package var strictFires: Int
    package var strictIntervalNanoseconds: UInt64
    /// The I/O rows: the file read (from the page cache), random 4 KiB reads and how
    /// many are kept in flight, bytes through the pipe, and timed runs of each.
    package var ioFileBytes: Int
    package var ioRandomReads: Int
    package var ioInFlight: Int
    package var ioPipeBytes: Int
    package var ioRepetitions: Int
    /// Swift concurrency rows: child tasks spawned and awaited (in groups of
    /// `tasksPerGroup`), round trips between two actors (2 hops each), timed runs of
    /// both after a warm-up; tasks that each sleep `taskSleeps` times; tasks that each
    /// block `blockingNanoseconds`; hops to the main actor.
    package var spawnTasks: Int
    package var tasksPerGroup = 1000
    package var actorRoundTrips: Int
    package var concurrencyRepetitions: Int
    package var sleepingTasks = 1000
    package var taskSleeps: Int
    package var taskSleepNanoseconds: UInt64 = 50_000_000
    package var taskSleepToleranceNanoseconds: UInt64 = 10_000_000
    package var blockingTasks: Int
    package var mainActorHops: Int
    /// How long the sensor workload is measured.
    package var sensorNanoseconds: UInt64

    package static let full = BenchScale(
        serialItems: 1_000_000, hops: 100_000, syncCalls: 1_000_000, performIterations: 1_000_000,
        repetitions: 5, blockingItems: 256, blockingNanoseconds: 20_000_000,
        floodItems: 64, floodCPUNanoseconds: 100_000_000, interactiveItems: 200,
        interactiveGapNanoseconds: 2_000_000, queues: 10_000, pendingPerQueue: 10,
        idleNanoseconds: 10_000_000_000, timers: 200, timerIntervalNanoseconds: 50_000_000,
        timerLeewayNanoseconds: 25_000_000, timersNanoseconds: 3_000_000_000, strictFires: 300,
        strictIntervalNanoseconds: 10_000_000, ioFileBytes: 256 << 20, ioRandomReads: 65_536, ioInFlight: 64,
        ioPipeBytes: 256 << 20, ioRepetitions: 3, spawnTasks: 1_000_000, actorRoundTrips: 200_000,
        concurrencyRepetitions: 3, taskSleeps: 20, blockingTasks: 256, mainActorHops: 10_000,
        sensorNanoseconds: 5_000_000_000)

    package static let quick = BenchScale(
        serialItems: 100_000, hops: 10_000, syncCalls: 100_000, performIterations: 100_000,
        repetitions: 1, blockingItems: 64, blockingNanoseconds: 20_000_000,
        floodItems: 64, floodCPUNanoseconds: 100_000_000, interactiveItems: 50,
        interactiveGapNanoseconds: 2_000_000, queues: 1_000, pendingPerQueue: 10,
        idleNanoseconds: 2_000_000_000, timers: 200, timerIntervalNanoseconds: 50_000_000,
        timerLeewayNanoseconds: 25_000_000, timersNanoseconds: 1_000_000_000, strictFires: 100,
        strictIntervalNanoseconds: 10_000_000, ioFileBytes: 32 << 20, ioRandomReads: 8192, ioInFlight: 64,
        ioPipeBytes: 32 << 20, ioRepetitions: 1, spawnTasks: 100_000, actorRoundTrips: 20_000,
        concurrencyRepetitions: 1, taskSleeps: 5, blockingTasks: 64, mainActorHops: 1000,
        sensorNanoseconds: 1_000_000_000)
}

extension BenchScale {
    /// Windows the timers row's timers need per interval at the least: their phases are
    /// spread evenly over the interval, and one window serves the deadlines of at most
    /// one leeway's width.
    package var timerWindowsPerInterval: Int {
        Int((timerIntervalNanoseconds + timerLeewayNanoseconds - 1) / timerLeewayNanoseconds)
    }

    /// The fewest context switches the timers row can take: per window, the manager's
    /// wake-up and one worker's to run the handlers.
    package var timerSwitchFloor: Int {
        timerWindowsPerInterval * Int(timersNanoseconds / timerIntervalNanoseconds) * 2
    }
}
