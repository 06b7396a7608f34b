#if DEBUG
import Synchronization

/// A closure a test installs to run at a chosen point of the runtime, in debug builds
/// only: it may hold the thread there to make a window as long as the test likes, and
/// answer the runtime. One atomic load when none is installed. The one shape of test
/// hook: the inbox's windows (`InboxHook.hook`), a token's pool node (`PooledTokenHook.hook`),
/// a pool thread before its first look (`Scheduler.beforeFirstLook`), every
/// line written to stderr (`DiagnosticsObserver.hook`), the wall clock's offset
/// (`WallClock.offsetHook`) and the syscall faults (`SyscallFaults.hook`). Work a test
/// runs on the manager thread goes as a `.run` request.
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
