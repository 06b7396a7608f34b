import Synchronization

/// The main queue's drainer: the main thread, inside `dispatchMain()` (or the main
/// executor's `run`, which is the same loop). `@MainActor` jobs are nodes of the main
/// queue's FIFO too (Concurrency/MainQueueExecutor.swift), so they and main-queue items
/// run in one order. Run dry, it watches for the next token before it parks while the
/// tokens come back to back (MainThreadWatch.swift).
// @unchecked Sendable: a futex event and atomics, and the watch's state, which only the
// main thread touches.
final class MainThread: @unchecked Sendable {
    static let shared = MainThread()
    private let event = FutexEvent()
    private let stopRequested = Atomic<Bool>(false)
    /// When the last token was posted (monotonic nanoseconds).
    private let lastPost = Atomic<UInt64>(0)
    private let watchesBegun = Atomic<Int>(0)
    private let watchesEnded = Atomic<Int>(0)
    /// Whether to watch before parking, kept across `drain(until:)` calls (nil: not
    /// made yet; the runtime is started by then).
    private var watch: MainThreadWatch?
    /// The main thread is inside `drain(until:)`: it runs the main queue's work.
    private let draining = Atomic<Bool>(false)
    /// Batches drained so far (the main-queue watch compares it across its look).
    private let drains = Atomic<UInt64>(0)

    var isDraining: Bool { draining.load(ordering: .relaxed) }
    var drainCount: UInt64 { drains.load(ordering: .relaxed) }
    /// Reports work the main queue holds while nothing drains it.
    private let stallWatch = MainQueueStallWatch()
    /// Its reports so far (`RuntimeStatistics.mainQueueStallReports`).
    var stallReports: Int { stallWatch.reports }
    /// What the main thread waits on in a Ringlet wait (nil: none), for that report.
    private let blockedLock = FutexLock()
    private var blockedOn: WaitReason?

    /// Watches begun (`RuntimeStatistics.mainThreadWatches`).
    var watches: Int { watchesBegun.load(ordering: .relaxed) }
    /// Watches a token ended (`RuntimeStatistics.mainThreadWatchesCaught`).
    var watchesCaught: Int { watchesEnded.load(ordering: .relaxed) }
    /// The descriptor another loop of the main thread polls (MainQueue+OtherLoops.swift).
    private let readiness = MainQueueReadiness()

    /// The main queue has a token: wake the main thread, and make another loop's
    /// descriptor readable.
    func tokenPosted() {
        lastPost.store(MonotonicClock.nanoseconds, ordering: .relaxed)
        event.post()
        // RingletFoundationCompat's bridge, when linked, adds the descriptor to
        // Foundation's main run loop (RunLoopBridge.swift).
        readiness.startRunLoopBridgeOnce()
        readiness.post()
        if !draining.load(ordering: .relaxed) { stallWatch.tokenPostedWithoutDrain(drains: drainCount) }
    }

    /// Runs `body`, a Ringlet wait of the main thread for `reason`, noted for the
    /// main-queue stall report.
    func blocked<R>(on reason: WaitReason, _ body: () -> R) -> R {
        blockedLock.withLock { blockedOn = reason }
        defer { blockedLock.withLock { blockedOn = nil } }
        return body()
    }

    /// What the main thread waits on now, described (nil: not in a Ringlet wait).
    var blockedReason: String? {
        let reason = blockedLock.withLock { blockedOn }
        return reason?.description
    }

    /// Drains the main queue forever. Called on the main thread only.
    func run() -> Never {
        while true { drain(until: { false }) }
    }

    /// Drains the main queue until `condition` holds (looked at before each batch and
    /// after each wake-up) or `stop()` is called. Called on the main thread only.
    func drain(until condition: () -> Bool) {
        #if !hasFeature(Embedded) && compiler(>=6.3)
        // Main-actor jobs held before the runtime started go first (MainJobsBeforeStart).
        MainJobsBeforeStart.shared.moveToMainQueue()
        #endif
        let main = DispatchQueue.main
        let context = ThreadContext.current
        var watch = self.watch ?? MainThreadWatch(spinMicroseconds: RuntimeParts.shared.spinMicroseconds,
                                                  cores: Runtime.shared.configuration.cores)
        defer { self.watch = watch }
        var idleStart: UInt64 = 0  // 0: not idle
        stopRequested.store(false, ordering: .relaxed)
        let outer = draining.exchange(true, ordering: .relaxed)
        stallWatch.drainStarts()
        defer { if !outer { draining.store(false, ordering: .relaxed) } }
        while !condition() && !stopRequested.load(ordering: .relaxed) {
            let seen = event.snapshot
            let hasToken = self.hasToken
            if hasToken {
                if idleStart != 0 {
                    watch.idleEnded(idleStart: idleStart, posted: lastPost.load(ordering: .relaxed))
                    idleStart = 0
                }
                drains.wrappingAdd(1, ordering: .relaxed)
                if let tail = main.drain(tokenPriority: QoSPriority(.userInteractive), from: nil, context: context,
                                         topLevel: false) {
                    NodeRunner.drainChain(from: main, tail: tail, context: context)
                }
                continue
            }
            if idleStart == 0 {
                idleStart = MonotonicClock.nanoseconds
                if watch.watchNanoseconds > 0, self.watch(whileUnchangedFrom: seen, for: watch.watchNanoseconds) {
                    continue
                }
            }
            _ = event.wait(ifUnchangedFrom: seen)
        }
    }

    /// Spins up to `nanoseconds` for a post (a token, or `stop()`); true when one came.
    /// Only a post that was not `stop()`'s counts as caught.
    private func watch(whileUnchangedFrom seen: UInt32, for nanoseconds: UInt64) -> Bool {
        watchesBegun.wrappingAdd(1, ordering: .relaxed)
        guard ThreadControl.spin(until: MonotonicClock.nanoseconds &+ nanoseconds, for: { event.snapshot != seen })
        else { return false }
        if !stopRequested.load(ordering: .relaxed) { watchesEnded.wrappingAdd(1, ordering: .relaxed) }
        return true
    }

    /// The main queue holds a token no drain has taken.
    private var hasToken: Bool {
        let main = DispatchQueue.main
        return main.lock.withLock { main.state.tokensOutstanding > 0 }
    }

    /// The descriptor another loop polls, made on first use (any thread): readable while
    /// the main queue holds a token no drain has taken.
    func descriptorForOtherLoops() throws(Errno) -> Int32 {
        let (fd, made) = try readiness.open()
        // Work that was posted before the descriptor existed: say so now.
        if made && hasToken { readiness.post() }
        return fd
    }

    /// One batch of the main queue for another loop (main thread only): takes the
    /// descriptor's readiness, runs what the main queue holds, and returns without
    /// waiting; when work remains (the batch ended at `drainBatch`, or more came), the
    /// descriptor is readable again, so the other loop's own events take turns with it.
    func drainForOtherLoop() {
        readiness.take()
        var batches = 0
        drain(until: {
            defer { batches += 1 }
            return batches > 0 || !hasToken
        })
        if hasToken { readiness.post() }
    }

    /// The run-loop bridge's drain: like `drainForOtherLoop`, but where the main queue
    /// cannot be drained here — off the main thread, or inside its own drain or a queue's
    /// item, where a run loop may be spun — it only takes the readiness: the drain
    /// already under way runs the work once that item returns.
    func drainFromRunLoop() {
        let context = ThreadContext.current
        if !context.isMainThread { return }
        if context.currentQueue != nil || isDraining {
            readiness.take()
            return
        }
        drainForOtherLoop()
    }

    /// Ends the current `drain(until:)` at its next look (any thread).
    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        event.post()
    }
}

/// Parks the main thread and runs the main queue's items on it, forever. Traps
/// when called from any other thread.
public func dispatchMain() -> Never {
    let context = ThreadContext.current
    if !context.isMainThread {
        ringletMisuse("dispatchMain() called from a thread that is not the main thread; call it at the end of "
            + "main() on the main thread")
    }
    if let queue = context.currentQueue {
        ringletMisuse("dispatchMain() called from an item of queue '\(queue.label)' on the main thread: "
            + "dispatchMain() never returns, so that item would never end\(queue.isMain ? ", and the main queue is already being drained" : ""). "
            + "Call dispatchMain() once, at the end of main(), outside any queue's work")
    }
    if MainThread.shared.isDraining {
        ringletMisuse("dispatchMain() called while the main thread already drains the main queue (a nested "
            + "dispatchMain() or a run of the main executor): it never returns. Call dispatchMain() once, at the end of "
            + "main(), outside any queue's work")
    }
    _ = Runtime.shared
    ForkGuard.check("dispatchMain()")
    MainThread.shared.run()
}
