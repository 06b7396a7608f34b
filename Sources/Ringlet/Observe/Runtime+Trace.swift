/// The trace timeline (Observing, "The trace timeline"): with `RuntimeConfiguration.trace`
/// (the `trace` profile key) or RINGLET_TRACE naming a file, every thread of the
/// process records its events in a fixed ring, and the file is written in Chrome's
/// trace event format at exit or on demand.
extension Runtime {
    /// Whether this runtime records a trace (fixed at start).
    public var isTracing: Bool { TraceRecorder.shared.isOn }

    /// The file the trace goes to at exit: RINGLET_TRACE when set and not empty or
    /// `off`, else the configuration's `trace`. A program linked for an explicit start
    /// reads no RINGLET_TRACE (`EnvironmentTrace`), and says so when it is set.
    static func tracePath(_ configuration: RuntimeConfiguration) -> String? {
        if let variable = ThreadControl.environment("RINGLET_TRACE"), !variable.isEmpty {
            if EnvironmentTrace.isRead { return variable.utf8.elementsEqual("off".utf8) ? nil : variable }
            ringletWarning("RINGLET_TRACE is not read: this program was linked without it (ringlet_first_use.c with "
                + "RINGLET_EXPLICIT_START); name the file in RuntimeConfiguration.trace, or link without "
                + "RINGLET_EXPLICIT_START")
        }
        return configuration.trace
    }

    /// Starts the trace recorder when a file is named (`Runtime.make`, before any
    /// thread exists, so that every thread gets its ring).
    static func startTraceIfAsked(_ configuration: RuntimeConfiguration) {
        if let path = tracePath(configuration) {
            OptionalParts.startTrace(path: path, eventsPerThread: configuration.traceEvents)
        }
    }

    /// Writes the events every thread's ring holds now to `path` (nil: the file named
    /// at start) in Chrome's trace event format, replacing the file; the rings go on
    /// recording. Perfetto's UI (ui.perfetto.dev), chrome://tracing and
    /// `ringlet trace <file>` open it. The same file is written again at exit.
    ///
    /// Cost: a copy of every ring and the JSON text (about 150 bytes an event), made
    /// on the calling thread; call it when the work you want to see is done, not per
    /// item. Events a thread records while its ring is read are kept or counted as
    /// dropped, never torn. Throws the errno when the file cannot be written; traps
    /// when tracing is off (set `trace` in the profile or RINGLET_TRACE).
    public func writeTrace(to path: String? = nil) throws(Errno) {
        let recorder = TraceRecorder.shared
        guard recorder.isOn, let configured = recorder.configuredPath else {
            ringletMisuse("Runtime.writeTrace: tracing is off; name a file in the 'trace' profile key "
                + "(RuntimeConfiguration.trace) or in RINGLET_TRACE before the runtime starts")
        }
        if let error = recorder.write(to: path ?? configured) { throw error }
    }
}
