// What only the Ringlet side of `ringlet bench` does: start the runtime, and the
// statistics lines it adds to the figures. The workloads are in Sources/BenchWorkloads,
// linked here as Workloads/ and compiled with BENCH_RINGLET against Ringlet (see
// Sources/BenchWorkloads/Workloads.swift). Never imports Dispatch or Foundation
// (Foundation re-exports Dispatch), so `DispatchQueue` & co. are Ringlet's.
import Glibc
import Ringlet

extension Workloads {
    /// Starts the runtime with the derived configuration — or, when RINGLET_BOARD names
    /// a board or a profile file, with that profile (a board's shape on this machine,
    /// or `spinMicroseconds = 0` for repeatable instruction counts) — and returns its shape.
    package static func start() -> [(String, Double)] {
        let runtime: Runtime
        do {
            if let board = getenv("RINGLET_BOARD"), board.pointee != 0 {
                runtime = Runtime.current  // starts with the profile RINGLET_BOARD names
            } else {
                runtime = try Runtime.start(configuration: .derived())
            }
        } catch {
            fputs("ringlet bench: Runtime.start failed: \(error)\n", stderr)
            exit(2)
        }
        let configuration = runtime.configuration
        return [("workers", Double(configuration.workers)), ("reserve", Double(configuration.reserve)),
                ("low_qos_workers", Double(configuration.lowQoSWorkers)),
                ("work_nodes", Double(configuration.workNodes)),
                ("reserved_bytes", Double(Runtime.statistics.reservedBytes))]
    }

    /// After every row: how often submitters waited for a free work node, and the most
    /// nodes in use at once.
    static func runtimeStatistics() -> [(String, Double)] {
        let statistics = Runtime.statistics
        return [("node_exhaustion_waits", Double(statistics.workNodeExhaustionWaits)),
                ("nodes_peak", Double(statistics.workNodesPeak)),
                ("node_backlog_yields", Double(statistics.workNodeBacklogYields)),
                ("strict_staged", Double(statistics.strictTimerFiresStaged)),
                ("strict_reached_late", Double(statistics.strictTimerFiresReachedLate)),
                ("main_watches", Double(statistics.mainThreadWatches)),
                ("main_watches_caught", Double(statistics.mainThreadWatchesCaught)),
                ("manager_wait_wakes", Double(statistics.workerWakesInManagerWait)),
                ("covered_in_kernel", Double(statistics.workersCoveredInKernel))]
    }

    /// While the memory row's items are pending: the work nodes they hold.
    static func pendingItemStatistics() -> [(String, Double)] {
        [("nodes_in_use", Double(Runtime.statistics.workNodesInUse))]
    }

    /// Ringlet's threads all exist from `start()`, which the child ran before the row.
    static func bringUpThreads(with queue: DispatchQueue) {}

    /// Whether Ringlet runs Swift concurrency in this child (1), or left it to the
    /// toolchain's executor (0: the row then compares the toolchain with itself).
    static func concurrencyExecutor() -> [(String, Double)] {
        [("concurrency_on_ringlet", Runtime.current.runsSwiftConcurrency ? 1 : 0)]
    }

    /// Ends the process after a row whose main thread never returns (`dispatchMain()`).
    static func endProcess() -> Never { Runtime.exit(status: 0) }
}
