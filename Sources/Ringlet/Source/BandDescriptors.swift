import Synchronization

/// The descriptors one worker band watches itself (Architecture, "Descriptors watched
/// by their band"): read and write sources whose handlers that band's workers run, on a
/// descriptor epoll accepts (a pipe, a socket, a terminal, an eventfd). They sit in the
/// band's epoll set, edge-triggered, and the band's watcher (`Scheduler.park`) sleeps in
/// that set instead of on its futex: an event wakes one thread, which merges it into the
/// source and runs the handler itself, where a poll on the ring wakes the manager and
/// then a worker. A regular file (EPERM), a descriptor another source of the band
/// already watches (EEXIST) or a set the kernel refuses keep the manager's ring poll.
///
///   (1) add --> watched --(2) remove--> gone
///
///   (1) ManagerThread.armKernelEvents   (2) ManagerThread.disarmKernelEvents
///
/// Who takes the events: the band's watcher; a worker of the band that finishes a node
/// while no watcher waits (at most once a `busyLookNanoseconds`); and the manager, through
/// a poll of the set on its ring while it watches the band for a blocked worker, and at
/// its once-a-second look at the bands. Events are delivered under `lock`, by the
/// manager's slot and generation of the source, so one for a source removed meanwhile
/// finds nothing and a source never gets an event after `remove` returns.
// @unchecked Sendable: `entries`, `epollFD` and `wakeFD` under `lock` (the descriptors
// also published by `watchedCount`'s release, never closed); the counters are atomic.
final class BandDescriptors: @unchecked Sendable {
    let band: WorkerBand
    private let lock = FutexLock()
    /// The epoll set and the eventfd that wakes its watcher, made at the first `add`.
    private(set) var epollFD: Int32 = -1
    private(set) var wakeFD: Int32 = -1
    /// The kernel refused the set once (warned): the band watches nothing.
    private var refused = false
    /// By the manager's slot of each source (`SourceSlots`): its generation and itself.
    private var entries: [Entry?] = []
    /// Descriptors in the set now; read without the lock, > 0 publishes `epollFD`.
    let watchedCount = Atomic<Int>(0)

    /// Whether any descriptor is in the set (and `epollFD` may be used).
    var watchesAny: Bool { watchedCount.load(ordering: .acquiring) > 0 }
    /// A thread holds the set now: a watcher sleeping in it or a look (no other thread
    /// need look; none other may wait there).
    let watcherWaiting = Atomic<Bool>(false)
    /// A watcher found the set taken and sleeps on its futex instead (`wait`).
    private let waitingForTheSet = Atomic<Bool>(false)
    /// epoll refused a wait for good (warned once).
    private let waitRefused = Atomic<Bool>(false)
    /// When a thread last took the set's events (monotonic ns).
    let lastLook = Atomic<UInt64>(0)
    /// Events delivered since start (`RuntimeStatistics`): by the band's own threads,
    /// and by the manager in their stead.
    let eventsTakenByBand = Atomic<Int>(0)
    let eventsTakenByManager = Atomic<Int>(0)

    /// How often a busy worker of the band looks at the set while no watcher waits.
    static let busyLookNanoseconds: UInt64 = 1_000_000
    /// The most events one look takes (the rest stay ready for the next).
    static let eventsPerLook = 16
    /// The user data of the wake eventfd's events.
    private static let wakeData: UInt64 = .max

    private struct Entry {
        let generation: UInt32
        let source: DispatchSource
    }

    init(band: WorkerBand) { self.band = band }

    deinit { lock.deallocate() }

    /// Adds a read or write source's descriptor to the set; false when the set cannot
    /// watch it (the caller then polls it on the ring). Manager thread.
    func add(_ source: DispatchSource, fd: Int32, events: UInt32, slot: Int, generation: UInt32) -> Bool {
        lock.withLock {
            if epollFD < 0 && (refused || !makeSet()) { return false }
            let data = UInt64(generation) << 32 | UInt64(UInt32(truncatingIfNeeded: slot))
            do throws(Errno) {
                try EpollCalls.control(epollFD, .add, fd: fd, events: events | EpollCalls.edgeTriggered, data: data)
            } catch {
                return false
            }
            while entries.count <= slot { entries.append(nil) }
            entries[slot] = Entry(generation: generation, source: source)
            watchedCount.wrappingAdd(1, ordering: .releasing)
            return true
        }
    }

    /// Takes `source`'s descriptor out of the set: no event reaches it afterwards.
    /// Manager thread; the descriptor may already be closed (then epoll dropped it).
    func remove(_ source: DispatchSource, fd: Int32, slot: Int) {
        lock.withLock {
            guard slot < entries.count, let entry = entries[slot], entry.source === source else { return }
            // Only while the number still names the source's file: closed under the
            // source, epoll dropped it, and the number may name another source's file
            // now, whose registration a delete would take away.
            if let identity = source.descriptorIdentity, let now = Descriptors.identity(fd), now == identity {
                try? EpollCalls.control(epollFD, .delete, fd: fd, events: 0, data: 0)
            }
            entries[slot] = nil
            watchedCount.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    /// The watcher's sleep: in the set, until an event, a post of `event` (its eventfd)
    /// or `timeoutNanoseconds` (< 0: none). Returns how many descriptor events it left
    /// in `ready` (0 when a post came first or the time ran out; `deliver` takes them),
    /// or nil when another thread holds the set (a watcher before it, or a look): the
    /// caller then sleeps on its futex, and the holder posts the band's watcher when it
    /// leaves (`left`, from `release`). One holder at most: epoll hands an event (the
    /// eventfd's too) to one of its waiters, so a second thread in the set could take
    /// the wake meant for the first, which would sleep on with work waiting for it.
    func wait(_ event: FutexEvent, ifUnchangedFrom seen: UInt32, timeoutNanoseconds: Int64,
              into ready: UnsafeMutablePointer<UInt64>, left: inout Bool) -> Int? {
        guard claim(asWatcher: true) else { return nil }
        event.sleepsInEpoll(on: wakeFD)
        var count: Int32 = 0
        // After the mark (and its fence): a post before it shows here, one after it
        // writes the eventfd.
        if event.snapshot == seen {
            count = EpollCalls.waitForData(epollFD, into: ready, capacity: Self.eventsPerLook,
                                           timeoutNanoseconds: timeoutNanoseconds)
        }
        event.sleepsInEpoll(on: nil)
        left = release()
        if count < 0 && count != -Errno.interrupted.rawValue { return refusedWait(count) }
        // Only descriptors' events count: the eventfd's is a post, seen by the caller's loop.
        return Self.dropWakes(ready, count)
    }

    /// Takes what is ready without waiting (a busy worker's look, the manager's), unless
    /// another thread holds the set (then that thread takes it). `left`: as for `wait`.
    func takeReady(into ready: UnsafeMutablePointer<UInt64>, left: inout Bool) -> Int {
        guard watchesAny, claim(asWatcher: false) else { return 0 }
        lastLook.store(MonotonicClock.nanoseconds, ordering: .relaxed)
        let count = EpollCalls.waitForData(epollFD, into: ready, capacity: Self.eventsPerLook, timeoutNanoseconds: 0)
        left = release()
        // A wake found here was meant for no one: no watcher is in the set while we hold it.
        return Self.dropWakes(ready, count)
    }

    /// Keeps the descriptors' events of the `count` in `ready` (a negative count: none),
    /// in front; returns how many.
    private static func dropWakes(_ ready: UnsafeMutablePointer<UInt64>, _ count: Int32) -> Int {
        var kept = 0
        for index in 0..<Int(max(count, 0)) where ready[index] != wakeData {
            ready[kept] = ready[index]
            kept += 1
        }
        return kept
    }

    /// Takes the set for one thread. A watcher that finds it taken says it waits
    /// (`waitingForTheSet`) and tries once more: a holder that leaves after that second
    /// try sees the wish (`release`), one that left before it let the try succeed.
    private func claim(asWatcher: Bool) -> Bool {
        if watcherWaiting.compareExchange(expected: false, desired: true,
                                          ordering: .sequentiallyConsistent).exchanged { return true }
        guard asWatcher else { return false }
        waitingForTheSet.store(true, ordering: .sequentiallyConsistent)
        return watcherWaiting.compareExchange(expected: false, desired: true,
                                              ordering: .sequentiallyConsistent).exchanged
    }

    /// Gives the set back; true when a watcher waits for it (the caller posts the band's watcher).
    private func release() -> Bool {
        watcherWaiting.store(false, ordering: .sequentiallyConsistent)
        return waitingForTheSet.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// epoll refused the wait for good (a seccomp filter that answers EPERM to both
    /// epoll_pwait2 and epoll_wait, say): warned once; the watcher sleeps on its futex
    /// and the manager's looks take the events.
    private func refusedWait(_ result: Int32) -> Int? {
        if !waitRefused.exchange(true, ordering: .relaxed) {
            ringletWarning("the \(band.name) band's epoll wait was refused (\(Errno(negated: result).name)); its read and "
                + "write sources are served only by the manager's once-a-second look. Allow epoll_wait and "
                + "epoll_pwait2 in the process's seccomp filter")
        }
        return nil
    }

    /// Whether a busy worker should look now: descriptors watched, no watcher sleeping
    /// in the set, and no look for `busyLookNanoseconds`. Claims the look.
    func busyLookDue(at now: UInt64) -> Bool {
        guard watchesAny, !watcherWaiting.load(ordering: .relaxed) else { return false }
        let last = lastLook.load(ordering: .relaxed)
        guard now &- last >= Self.busyLookNanoseconds else { return false }
        return lastLook.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
    }

    /// Merges each event of `ready` into its source (which queues the delivery); returns
    /// how many reached a source. `byManager` says whose look it was (statistics).
    @discardableResult
    func deliver(_ ready: UnsafeMutablePointer<UInt64>, _ count: Int, byManager: Bool, trace: TraceBuffer?) -> Int {
        if count == 0 { return 0 }
        var delivered = 0
        lock.withLock {
            for index in 0..<count where ready[index] != Self.wakeData {
                let slot = Int(ready[index] & 0xFFFF_FFFF)
                guard slot < entries.count, let entry = entries[slot],
                      entry.generation == UInt32(truncatingIfNeeded: ready[index] >> 32) else { continue }
                if let trace {
                    var kind = TraceSourceKind.read
                    if case .write = entry.source.kind { kind = .write }
                    trace.record(.sourceEvent, aux: kind.rawValue, subject: UInt64(entry.source.handle))
                }
                entry.source.post(1)
                delivered += 1
            }
        }
        if delivered > 0 && byManager {
            eventsTakenByManager.wrappingAdd(delivered, ordering: .relaxed)
        } else if delivered > 0 {
            eventsTakenByBand.wrappingAdd(delivered, ordering: .relaxed)
        }
        return delivered
    }

    /// Under `lock`: the set and its wake eventfd (edge-triggered and never read: each
    /// write is one event). False, with a warning, when the kernel refuses either.
    private func makeSet() -> Bool {
        do throws(Errno) {
            let epoll = try EpollCalls.create()
            let wake: EventFD
            do throws(Errno) {
                wake = try EventFD()
            } catch {
                Descriptors.close(epoll)
                throw error
            }
            do throws(Errno) {
                try EpollCalls.control(epoll, .add, fd: wake.fd, events: Descriptors.readable | EpollCalls.edgeTriggered,
                                       data: Self.wakeData)
            } catch {
                Descriptors.close(epoll)
                wake.close()
                throw error
            }
            (epollFD, wakeFD) = (epoll, wake.fd)
            return true
        } catch {
            refused = true
            ringletWarning("the \(band.name) band could not make its epoll set (\(error.name)); its read and write "
                + "sources are polled by the manager, one more wake-up per event. Raise the open-file limit "
                + "(ulimit -n) if it says EMFILE")
            return false
        }
    }
}
