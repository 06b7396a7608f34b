/// Parts of the runtime that a program carries only when something in it can turn them
/// on (the BoardProfiles article, "What a program carries"): the trace recorder with its
/// file writer, and the dump signal with the live dump's manager sections and the
/// signal watch it is caught through. The runtime reaches each through a function
/// stored here by the code that turns it on — setting `RuntimeConfiguration.trace` or
/// `dumpSignal` (a profile's parser does the same), or reading RINGLET_TRACE
/// (`EnvironmentTrace`) — so a program that does none of that references none of
/// their code, and the linker drops it (the article gives its size).
///
/// The functions are stored once, before the runtime starts or while it does, and
/// never change afterwards; storing the same one again is harmless.
enum OptionalParts {
    private static let lock = FutexLock()
    nonisolated(unsafe) private static var traceStart: ((_ path: String, _ eventsPerThread: Int) -> Void)?
    nonisolated(unsafe) private static var dumpWatch: ((ManagerThread, Ring) -> Void)?
    nonisolated(unsafe) private static var dumpHandler: ((ManagerThread) -> Void)?

    /// Links the trace recorder's start (and through it the file writer).
    static func linkTrace() {
        lock.withLock {
            traceStart = { path, events in TraceRecorder.shared.start(path: path, eventsPerThread: events) }
        }
    }

    /// Links the dump signal: its watch (the signalfd, Ringlet's handler) and the dump.
    static func linkDumpSignal() {
        lock.withLock {
            dumpWatch = { manager, ring in manager.watchDumpSignal(ring) }
            dumpHandler = { manager in manager.dumpOnSignal() }
        }
    }

    /// Starts the trace recorder (`Runtime.make`, before any thread exists). The path
    /// comes from the configuration's `trace` or RINGLET_TRACE, and each of those links
    /// the recorder first, so it is always there.
    static func startTrace(path: String, eventsPerThread: Int) {
        guard let start = lock.withLock({ traceStart }) else {
            ringletBug("a trace file is named but the trace recorder was never linked")
        }
        start(path, eventsPerThread)
    }

    /// Watches the configuration's `dumpSignal` (manager thread, at start). Setting the
    /// key linked the watch, so it is always there when the key is not 0.
    static func watchDumpSignal(_ manager: ManagerThread, _ ring: Ring) {
        guard let watch = lock.withLock({ dumpWatch }) else {
            ringletBug("dumpSignal is set but the dump signal was never linked")
        }
        watch(manager, ring)
    }

    /// The dump signal came (manager thread).
    static func dumpOnSignal(_ manager: ManagerThread) {
        lock.withLock { dumpHandler }?(manager)
    }
}
