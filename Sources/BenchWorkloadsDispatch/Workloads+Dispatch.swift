// What only the Dispatch side of `ringlet bench` does. The workloads are in
// Sources/BenchWorkloads, linked here as Workloads/ and compiled with BENCH_DISPATCH
// against the toolchain's Dispatch (see Sources/BenchWorkloads/Workloads.swift).
import BenchSupport
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

    /// Swift concurrency runs on the toolchain's default executor here (the parent gives
    /// this child RINGLET_SWIFT_CONCURRENCY=toolchain: the binary links Ringlet, whose
    /// executors are otherwise installed at load). A task that ran on a Ringlet pool
    /// thread means the baseline became Ringlet: the child fails, saying so.
    static func concurrencyExecutor() -> [(String, Double)] {
        let name = waitFor("") { benchThreadName() }
        if name.hasPrefix("ringlet-") {
            fputs("bench: the Dispatch side's task ran on Ringlet's thread '\(name)', not the toolchain's executor: "
                + "run this child with RINGLET_SWIFT_CONCURRENCY=toolchain (ringlet bench does)\n", stderr)
            exit(3)
        }
        return []
    }

    /// Ends the process after a row whose main thread never returns (`dispatchMain()`).
    static func endProcess() -> Never { exit(0) }
}
