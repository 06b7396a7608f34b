import CRinglet

/// A one-word event that threads sleep on: the parking spot of a worker, of a thread
/// waiting in `sync`, on a work item or on a group.
///
/// The word counts "posts"; `wait` sleeps until the count differs from what the
/// waiter saw (`snapshot`), so a post that lands between the check and the sleep is
/// never lost (futex(2): FUTEX_WAIT returns EAGAIN when the word changed).
///
/// A band's watcher may sleep in epoll instead (Source/BandDescriptors.swift): the
/// second word then holds its eventfd + 1, and a wake writes the eventfd.
// @unchecked Sendable: a pointer to two words used only through atomics and futex(2).
struct FutexEvent: @unchecked Sendable {
    let word: UnsafeMutablePointer<UInt32>

    init() {
        word = .allocate(capacity: 2)
        word.initialize(repeating: 0, count: 2)
    }

    func deallocate() { word.deallocate() }

    /// The current post count; pass it to `wait(ifUnchangedFrom:)`.
    @inline(__always)
    var snapshot: UInt32 { rl_atomic_load_u32(word) }

    /// Wakes up to `count` sleepers (after making the word differ from any snapshot).
    @inline(__always)
    func post(wake count: Int32 = 1) {
        announce()
        wake(count)
    }

    /// The first half of `post`: makes the word differ from any snapshot, so that a
    /// sleeper whose wake comes later (`wake`, or a futex wake queued on a ring) and
    /// a waiter about to sleep both see the post.
    @inline(__always)
    func announce() { _ = rl_atomic_add_u32(word, 1) }

    /// The second half of `post`: wakes up to `count` sleepers (or the one in epoll).
    @inline(__always)
    func wake(_ count: Int32 = 1) { _ = rl_event_wake(word, count) }

    /// Whether the sleeper waits in epoll now: a futex wake queued on the ring would
    /// not reach it (ManagerThread+WorkerWakes.swift).
    var sleepsInEpoll: Bool { rl_event_sleeps_in_epoll(word) != 0 }

    /// Marks its one sleeper as waiting in epoll on a set that holds `eventFD` (nil:
    /// unmarks it): wakes then write that eventfd (Source/BandDescriptors.swift). Marking
    /// ends with a fence, so the sleeper's next look at `snapshot` is ordered after it.
    func sleepsInEpoll(on eventFD: Int32?) { rl_event_sleep_in_epoll(word, eventFD ?? -1) }

    /// Sleeps while the word still equals `seen`, at most `timeoutNanoseconds`
    /// (negative: no limit). Returns false only on timeout; true when posted or woken
    /// spuriously — callers re-check their condition either way.
    func wait(ifUnchangedFrom seen: UInt32, timeoutNanoseconds: Int64 = -1) -> Bool {
        let result = rl_futex_wait(word, seen, timeoutNanoseconds)
        return result != -Errno.timedOut.rawValue
    }
}
