/// The main queue inside another loop: a program whose main thread runs someone else's
/// loop — a `poll(2)` loop, GLib's, SDL's — instead of `dispatchMain()` adds the main
/// queue's descriptor to that loop and drains the main queue when it is readable, as
/// CoreFoundation does with libdispatch's main queue (Architecture, "The main queue in
/// another loop").
///
///   quiet --(1) work reaches the main queue--> readable --(2) drainMainQueue()--> quiet
///   (2) leaves it readable when work remains, so the loop comes back for the rest.
///
///   (1) MainThread.tokenPosted   (2) MainThread.drainForOtherLoop
extension Runtime {
    /// A descriptor that is readable (`POLLIN`, `EPOLLIN`) while the main queue holds
    /// work — items, `@MainActor` jobs, `sync` calls onto it — that no drain has taken:
    /// add it to the main thread's loop and call `drainMainQueue()` when it is readable.
    /// The same descriptor every time; it stays open for the life of the process, and
    /// only the runtime reads it (do not read or close it). Starts the runtime if it has
    /// not started. Throws `.eventfdUnavailable` (with the open-files limit to raise
    /// when that is the cause) when the system refuses the descriptor.
    public static func mainQueueDescriptor() throws(RuntimeError) -> Int32 {
        _ = shared
        do throws(Errno) {
            return try MainThread.shared.descriptorForOtherLoops()
        } catch {
            throw RuntimeError.eventfdUnavailable(error)
        }
    }

    /// Runs the work the main queue holds now, on the main thread, and returns without
    /// waiting for more: the other loop's half of `mainQueueDescriptor()`. Work that
    /// arrives while it runs, or that is left after `drainBatch` items, makes the
    /// descriptor readable again. Call it from the main thread's loop, outside any
    /// queue's work; it traps anywhere else, naming the call to make instead.
    public static func drainMainQueue() {
        let context = ThreadContext.current
        if !context.isMainThread {
            ringletMisuse("Runtime.drainMainQueue() called from a thread that is not the main thread: the main "
                + "queue's work runs only on the main thread. Call it from the main thread's loop when "
                + "Runtime.mainQueueDescriptor() is readable")
        }
        if let queue = context.currentQueue {
            ringletMisuse("Runtime.drainMainQueue() called from an item of queue '\(queue.label)': it must run "
                + "from the main thread's loop, outside any queue's work. Return from the item and let the loop "
                + "call it when Runtime.mainQueueDescriptor() is readable")
        }
        if MainThread.shared.isDraining {
            ringletMisuse("Runtime.drainMainQueue() called while the main thread drains the main queue "
                + "(dispatchMain() or the main executor's run): that drain already runs its work")
        }
        _ = shared
        MainThread.shared.drainForOtherLoop()
    }

    /// RingletFoundationCompat's run-loop bridge (RunLoopBridge.swift): drains one batch
    /// when the main thread may, and otherwise only takes the descriptor's readiness
    /// (a run loop spun inside a main-queue item, or one of another thread). No trap:
    /// Foundation calls it, not the program.
    @_spi(RunLoopBridge)
    public static func drainMainQueueFromRunLoop() {
        MainThread.shared.drainFromRunLoop()
    }
}
