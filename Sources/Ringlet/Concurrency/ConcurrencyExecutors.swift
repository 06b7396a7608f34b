/// Whether Ringlet becomes Swift concurrency's executor when the runtime starts
/// (Architecture, "Async code runs on the same pool").
///
/// - Full Swift 6.3 or later: with `swiftConcurrency` on, the runtime installs its
///   default and main executors (RingletExecutorFactory.swift) as it starts, before it
///   is published, so every job enqueued from then on runs on the pool. It does not
///   when it starts inside a task on a thread it did not create — an `async main`, or
///   the first task of a program that never started it: the toolchain's executors
///   already run tasks, and those tasks stay bound to them (an `async main`'s task
///   resumes on the toolchain's main executor, which Ringlet's main thread would never
///   drain: the program would hang). It says so in one line; a synchronous `main` that
///   calls `Runtime.start`, starts its tasks, then calls `dispatchMain()` avoids it.
/// - Swift before 6.3 (no executor hooks): never; async code stays on the toolchain's
///   executor and the key has no effect.
/// - Embedded Swift: Ringlet always provides the executor entry points the Concurrency
///   library leaves to the program (EmbeddedExecutorHooks.swift), where that library
///   exists for the target.
enum ConcurrencyExecutors {
    /// Installs the executors when it should; returns whether Ringlet runs Swift
    /// concurrency's jobs in this process.
    static func install(_ configuration: RuntimeConfiguration) -> Bool {
        #if hasFeature(Embedded)
        #if canImport(_Concurrency)
        return true
        #else
        return false
        #endif
        #elseif compiler(>=6.3)
        guard configuration.swiftConcurrency else { return false }
        let context = ThreadContext.current
        if insideTask && context.worker == nil {
            let place = context.isMainThread ? "in an async main (its task is bound to the toolchain's main executor)"
                : "inside a task on a thread Ringlet did not create"
            writeToStandardError("Ringlet: note: Swift concurrency stays on the toolchain's executor: the runtime "
                + "started \(place), so that executor already runs tasks. Start the runtime before the first task "
                + "(a synchronous main: Runtime.start, then the tasks, then dispatchMain()) to run async code on "
                + "Ringlet's pool, or set 'swiftConcurrency' to false to say it is meant")
            return false
        }
        installHooks()
        return true
        #else
        return false
        #endif
    }

    #if DEBUG && !hasFeature(Embedded) && compiler(>=6.3)
    /// Tests: installs the executors in a child process whose runtime started inside
    /// the test harness's task (which then ends the process itself).
    static func installForTests() {
        installHooks()
        Runtime.shared.runsSwiftConcurrency = true
    }
    #endif
}
