#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import Glibc

/// A value behind a pthread mutex, for the few fields of a channel read from any thread
/// (its addresses). A pthread lock rather than `Synchronization.Mutex`, which
/// ThreadSanitizer does not see.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&value)
    }
}

/// A count shared by closures (an `Atomic` cannot be captured).
final class SharedCount: @unchecked Sendable {
    private let count: Locked<Int>
    init(_ value: Int) { count = Locked(value) }
    /// Subtracts one and says whether that reached zero.
    func countDown() -> Bool { count.withLock { $0 -= 1; return $0 == 0 } }
}
#endif
