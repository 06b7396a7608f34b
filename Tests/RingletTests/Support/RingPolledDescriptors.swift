// Descriptors a test keeps on the manager's ring poll instead of their band's epoll set
// (Source/BandDescriptors.swift), for the tests of that path: polls refused, one-shot
// polls, completion-queue overflow, removals answered EALREADY. Others' sources keep
// their bands; a source of a listed descriptor is polled on the ring either way.

import Synchronization
@testable import Ringlet

enum RingPolledDescriptors {
    private static let list = DescriptorList()

    private final class DescriptorList: @unchecked Sendable {
        private let lock = FutexLock()
        private var fds: Set<Int32> = []
        private var installed = false
        func withLock<R>(_ body: (inout Set<Int32>, inout Bool) -> R) -> R { lock.withLock { body(&fds, &installed) } }
    }

    /// Sources on these descriptors registered from now on are polled on the ring.
    static func keep(_ fds: [Int32]) {
        let install = list.withLock { set, installed in
            set.formUnion(fds)
            defer { installed = true }
            return !installed
        }
        guard install else { return }
        ManagerThread.bandWatchHook.install { source in
            switch source.kind {
            case .read(let fd), .write(let fd): return !list.withLock { set, _ in set.contains(fd) }
            default: return true
            }
        }
    }

    /// Their later sources may go to their bands again (a descriptor number is reused).
    static func release(_ fds: [Int32]) {
        list.withLock { set, _ in set.subtract(fds) }
    }
}
