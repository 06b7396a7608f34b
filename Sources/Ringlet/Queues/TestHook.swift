#if DEBUG
import Synchronization

/// A closure a test installs to run at a chosen point of the runtime, in debug builds
/// only (`InboxHook`, `PooledTokenHook`): it may hold the thread there to make a window
/// as long as the test likes, and answer the runtime. One atomic load when none is
/// installed.
// @unchecked Sendable: `body` under `lock`.
final class TestHook<Argument, Answer>: @unchecked Sendable {
    private let installed = Atomic<Bool>(false)
    private let lock = FutexLock()
    private var body: (@Sendable (Argument) -> Answer)?

    func install(_ newBody: (@Sendable (Argument) -> Answer)?) {
        lock.withLock { body = newBody }
        installed.store(newBody != nil, ordering: .releasing)
    }

    /// The installed closure's answer; nil when none is installed.
    @inline(__always)
    func call(_ argument: Argument) -> Answer? {
        guard installed.load(ordering: .acquiring) else { return nil }
        let current = lock.withLock { body }
        return current?(argument)
    }
}
#endif
