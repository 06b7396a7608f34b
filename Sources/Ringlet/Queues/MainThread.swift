/// The main queue's drainer: the main thread, inside `dispatchMain()`.
// @unchecked Sendable: its only state is a futex event (atomic word).
final class MainThread: @unchecked Sendable {
    static let shared = MainThread()
    private let event = FutexEvent()

    /// The main queue has a token: wake the main thread.
    func tokenPosted() { event.post() }

    /// Drains the main queue forever. Called on the main thread only.
    func run() -> Never {
        let main = DispatchQueue.main
        let context = ThreadContext.current
        while true {
            let seen = event.snapshot
            let hasToken = main.lock.withLock { main.state.tokensOutstanding > 0 }
            if hasToken {
                main.drain(tokenPriority: QoSPriority(.userInteractive), from: nil, context: context, topLevel: false)
                continue
            }
            _ = event.wait(ifUnchangedFrom: seen)
        }
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
