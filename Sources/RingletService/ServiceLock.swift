import Glibc

/// A pthread mutex: the sessions' and listeners' state lock. Not `Mutex` from
/// Synchronization, whose atomics ThreadSanitizer does not see (it is not built with
/// it), nor `FutexLock`, which is the runtime's own.
final class ServiceLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// One line on standard error, "ringlet: " first: what a service reports without an
/// error to throw (a refused client, a dropped message).
func serviceWarning(_ text: String) {
    let line = Array(("ringlet: " + text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
