// What only the Dispatch side of `ringlet bench` does. The workloads are in
// Sources/BenchWorkloads, linked here as Workloads/ and compiled with BENCH_DISPATCH
// against the toolchain's Dispatch (see Sources/BenchWorkloads/Workloads.swift).
import Dispatch
import Glibc

extension Workloads {
    /// Figures of the runtime itself after every row: Dispatch has none to give.
    static func runtimeStatistics() -> [(String, Double)] { [] }

    /// Figures of the runtime while the memory row's items are pending: none either.
    static func pendingItemStatistics() -> [(String, Double)] { [] }

    /// Dispatch creates its threads on first use: touch it so that they exist before
    /// the idle-wakeups row watches them, with a few items on the default global queue
    /// and on `queue`.
    static func bringUpThreads(with queue: DispatchQueue) {
        let touch = DispatchGroup()
        for _ in 0..<4 { DispatchQueue.global().async(group: touch) {} }
        for _ in 0..<4 { queue.async(group: touch) {} }
        touch.wait()
    }

    /// Swift concurrency runs on the toolchain's default executor here: nothing to add.
    static func concurrencyExecutor() -> [(String, Double)] { [] }

    /// Ends the process after a row whose main thread never returns (`dispatchMain()`).
    static func endProcess() -> Never { exit(0) }
}
