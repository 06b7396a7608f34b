/// Whether Ringlet is Swift concurrency's executor (Architecture, "Async code runs on
/// the same pool").
///
/// - Full Swift 6.3 or later: Ringlet's default and main executors
///   (RingletExecutorFactory.swift) are installed when the program is loaded, before
///   main (ringlet_executors.c), so an `async main` runs on them from its first line;
///   no thread starts until a job or a queue needs the runtime. A program keeps the
///   toolchain's executors with RINGLET_SWIFT_CONCURRENCY=toolchain or by defining
///   `ringlet_keep_toolchain_executors`, and keeps them for its life: the runtime's
///   start never switches executors, so nothing depends on which code started it. At
///   the start, the `swiftConcurrency` key set to false hands Swift concurrency back to
///   the toolchain when no job has reached Ringlet's executors yet; after that it
///   cannot, and says so.
/// - Swift before 6.3 (no executor hooks): never; async code stays on the toolchain's
///   executor and the key has no effect.
/// - Embedded Swift: Ringlet always provides the executor entry points the Concurrency
///   library leaves to the program (EmbeddedExecutorHooks.swift), where that library
///   exists for the target.
enum ConcurrencyExecutors {
    /// Decides at the runtime's start; returns whether Ringlet runs Swift concurrency's
    /// jobs in this process.
    static func install(_ configuration: RuntimeConfiguration) -> Bool {
        #if hasFeature(Embedded)
        #if canImport(_Concurrency)
        return true
        #else
        return false
        #endif
        #elseif compiler(>=6.3)
        let atLoad = ExecutorsAtLoad.current
        if atLoad == .installed {
            if configuration.swiftConcurrency { return true }
            if !MainJobsBeforeStart.shared.sawJobBeforeStart {
                restoreToolchainExecutors()
                return false
            }
            writeToStandardError("Ringlet: note: 'swiftConcurrency' is false, but Swift concurrency's jobs already run "
                + "on Ringlet's executors, installed when the program was loaded (an async main's first job was one): "
                + "they stay there. To keep the toolchain's executors, set RINGLET_SWIFT_CONCURRENCY=toolchain in the "
                + "environment or define ringlet_keep_toolchain_executors in the program")
            return true
        }
        if atLoad == .badEnvironment {
            let value = ThreadControl.environment("RINGLET_SWIFT_CONCURRENCY") ?? ""
            writeToStandardError("Ringlet: warning: RINGLET_SWIFT_CONCURRENCY=\(value) is neither 'toolchain' nor "
                + "'ringlet'; Swift concurrency was left on the toolchain's executors. Unset it, or set it to one of those")
        }
        // Kept before main: the executor stays the toolchain's for the process's life, so
        // nothing depends on which code started the runtime first.
        if atLoad != .notAvailable { return false }
        guard configuration.swiftConcurrency else { return false }
        let context = ThreadContext.current
        if insideTask && context.worker == nil {
            writeToStandardError("Ringlet: note: Swift concurrency stays on the toolchain's executor: the runtime "
                + "started inside a task, and this program was linked without Ringlet's load-time install "
                + "(ringlet_executors.c); link it to run async code on Ringlet's pool")
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
