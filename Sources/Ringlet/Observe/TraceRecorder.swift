import Synchronization

/// The trace of the process (Observing, "The trace timeline"): whether it is on, the
/// ring of every thread that records, and where the file goes.
///
/// Tracing is fixed at start (Architecture, "Fixed at start"): `Runtime.make` calls
/// `start` before it creates any thread when `RuntimeConfiguration.trace` (or
/// RINGLET_TRACE) names a file, and from then on every thread context gets a ring
/// (`ThreadContext.trace`). With tracing off no ring exists, and each place that
/// records pays one load of a field it already has at hand (the context's `trace`,
/// the manager's) and a branch that is never taken.
// @unchecked Sendable: `buffers`, `path` and `written` under `lock`; `on` atomic.
final class TraceRecorder: @unchecked Sendable {
    static let shared = TraceRecorder()

    private let lock = FutexLock()
    private var buffers: [TraceBuffer] = []
    private var path: String?
    private var eventsPerThread = 0
    /// CLOCK_MONOTONIC at start: the trace's time zero.
    private var startNanoseconds: UInt64 = 0
    private let on = Atomic<Bool>(false)

    /// Whether the runtime traces (fixed at start).
    var isOn: Bool { on.load(ordering: .acquiring) }

    /// Turns tracing on for the threads made from now on, with rings of
    /// `eventsPerThread` events, and writes the file to `path` when the process exits.
    func start(path: String, eventsPerThread: Int) {
        lock.withLock {
            self.path = path
            self.eventsPerThread = eventsPerThread
            startNanoseconds = MonotonicClock.nanoseconds
        }
        on.store(true, ordering: .releasing)
        if !ProcessExit.atExit({ TraceRecorder.shared.writeAtExit() }) {
            ringletWarning("trace: atexit(3) refused the hook that writes \(path) at exit; call "
                + "Runtime.current.writeTrace() before the program ends")
        }
    }

    /// A ring for a thread whose context is being made, or nil with tracing off.
    func buffer(lane: String, threadID: Int32, sortIndex: Int) -> TraceBuffer? {
        guard isOn else { return nil }
        return lock.withLock {
            let buffer = TraceBuffer(lane: lane, threadID: threadID, sortIndex: sortIndex, capacity: eventsPerThread)
            buffers.append(buffer)
            return buffer
        }
    }

    /// Every ring made so far.
    var lanes: [TraceBuffer] { lock.withLock { buffers } }

    /// The file named at start (nil: tracing is off).
    var configuredPath: String? { lock.withLock { path } }

    /// Events recorded by every thread since the start, kept or since overwritten.
    var recordedTotal: Int { lanes.reduce(0) { $0 + $1.recorded } }

    /// Writes the trace file (`TraceJSON`) to `path`; nil or the errno.
    func write(to path: String) -> Errno? {
        let zero = lock.withLock { startNanoseconds }
        return DumpFile.write(TraceJSON.document(lanes: lanes, zero: zero), to: path)
    }

    /// The atexit hook: writes the file named at start and says so on stderr.
    private func writeAtExit() {
        guard isOn, let path = configuredPath else { return }
        if let error = write(to: path) {
            ringletWarning("trace: could not write \(path): \(error.name); check that its folder exists and is "
                + "writable, or name another file in 'trace' (RINGLET_TRACE)")
        }
    }
}

extension ThreadContext {
    /// The ring a new context records into: nil with tracing off (Observe/TraceRecorder.swift).
    static func traceBuffer(worker: Worker?, isMainThread: Bool, lane: String?) -> TraceBuffer? {
        let recorder = TraceRecorder.shared
        guard recorder.isOn else { return nil }
        let threadID = ThreadControl.threadID
        if let worker {
            return recorder.buffer(lane: "worker \(worker.index) (\(worker.band.name))", threadID: threadID,
                                   sortIndex: 1 + worker.index)
        }
        if let lane { return recorder.buffer(lane: lane, threadID: threadID, sortIndex: 0) }
        if isMainThread { return recorder.buffer(lane: "main", threadID: threadID, sortIndex: 1000) }
        return recorder.buffer(lane: "thread \(threadID)", threadID: threadID, sortIndex: 2000)
    }
}
