import Synchronization

/// The main queue's drainer: the main thread, inside `dispatchMain()` (or the main
/// executor's `run`, which is the same loop). `@MainActor` jobs are nodes of the main
/// queue's FIFO too (Concurrency/MainQueueExecutor.swift), so they and main-queue items
/// run in one order.
// @unchecked Sendable: its only state is a futex event and an atomic flag.
final class MainThread: @unchecked Sendable {
    static let shared = MainThread()
    private let event = FutexEvent()
    private let stopRequested = Atomic<Bool>(false)

    /// The main queue has a token: wake the main thread.
    func tokenPosted() { event.post() }

    /// Drains the main queue forever. Called on the main thread only.
    func run() -> Never {
        while true { drain(until: { false }) }
    }

    /// Drains the main queue until `condition` holds (looked at before each batch and
    /// after each wake-up) or `stop()` is called. Called on the main thread only.
    func drain(until condition: () -> Bool) {
        let main = DispatchQueue.main
        let context = ThreadContext.current
        stopRequested.store(false, ordering: .relaxed)
        while !condition() && !stopRequested.load(ordering: .relaxed) {
            let seen = event.snapshot
            let hasToken = main.lock.withLock { main.state.tokensOutstanding > 0 }
            if hasToken {
                main.drain(tokenPriority: QoSPriority(.userInteractive), from: nil, context: context, topLevel: false)
                continue
            }
            _ = event.wait(ifUnchangedFrom: seen)
        }
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
    _ = Runtime.shared
    ForkGuard.check("dispatchMain()")
    MainThread.shared.run()
}
