// Chosen calls at the syscall boundary fail on cue (`SyscallFaults`): the tests keep
// the list of faults to come and answer the runtime's hook from it, so the runtime
// holds only the hook (System/TestHook.swift).

import Synchronization
@testable import Ringlet

extension SyscallFaults {
    /// Faults to come: the thread they are for, the call, the errno it fails with. Under
    /// a `FutexLock`, not a `Mutex`: the manager reads the list at every syscall, and
    /// ThreadSanitizer does not see the ordering of `Mutex`'s contended path (its futex
    /// wait is in the uninstrumented standard library), so it reported the list's reads
    /// and writes as a race.
    private static let pending = FaultList()

    private final class FaultList: @unchecked Sendable {
        private let lock = FutexLock()
        private var list: [(thread: Int32, call: Call, errno: Errno)] = []
        func withLock<R>(_ body: (inout [(thread: Int32, call: Call, errno: Errno)]) -> R) -> R {
            lock.withLock { body(&list) }
        }
    }

    /// Injected with this thread, a fault hits the next such call of any thread: for a
    /// thread that does not exist yet (the manager's ring setup, in a child process).
    static let anyThread: Int32 = 0

    /// The next `count` calls of `call` made by `thread` (the calling thread by
    /// default; the manager's for ring faults) fail with `errno`. Other threads, such
    /// as tests running in parallel, are not affected.
    static func inject(_ call: Call, _ errno: Errno, count: Int = 1, thread: Int32 = ThreadControl.threadID) {
        pending.withLock { for _ in 0..<count { $0.append((thread, call, errno)) } }
        hook.install { call in
            pending.withLock { list -> Errno? in
                if list.isEmpty { return nil }
                let thread = ThreadControl.threadID
                guard let index = list.firstIndex(where: {
                    ($0.thread == thread || $0.thread == anyThread) && $0.call == call
                }) else { return nil }
                return list.remove(at: index).errno
            }
        }
    }

    /// Forgets every fault injected for `thread` (the calling thread by default).
    static func reset(thread: Int32 = ThreadControl.threadID) {
        pending.withLock { $0.removeAll { $0.thread == thread } }
    }
}
