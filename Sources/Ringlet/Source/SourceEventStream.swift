#if canImport(_Concurrency)
import _Concurrency

/// Where a source's deliveries go while a task iterates its events
/// (DispatchSource+Events.swift), in place of the event handler.
///
/// It holds at most one element: a delivery that finds no task waiting merges its
/// value into the one pending, by the source's own rule (a sum for timers, signals and
/// `add`, an OR for `or`, process and file-system events, the latest for `replace` and
/// the byte estimates of read and write sources). So a consumer that is not iterating
/// sees the events of that time as one element, as a slow handler sees them as one
/// `data`, and nothing grows. The stream ends once the source's cancel handler has run.
///
///   empty --(1) delivery--> holding --(1) delivery, merged--> holding
///   empty --(2) task asks--> waiting --(1) delivery--> empty (the task resumes with it)
///   holding --(2) task asks--> empty (the task gets the element at once)
///   any --(3) source finished--> ended (a waiting task resumes with nil)
///
///   (1) `offer` (the source's queue)  (2) `wait` (the task)  (3) `end` (the source's queue)
// @unchecked Sendable: every field under `lock`; the continuation is taken (and resumed) once.
final class SourceEventStream: @unchecked Sendable {
    /// How a new value joins the one pending.
    enum Merge {
        case sum, or, latest
    }

    private let merge: Merge
    private let lock = FutexLock()
    // Under `lock`:
    private var pending: UInt?
    private var waiter: CheckedContinuation<UInt?, Never>?
    private var ended = false

    init(kind: DispatchSource.Kind) {
        switch kind {
        case .timer, .dataAdd, .signal: merge = .sum
        case .dataOr, .process, .fileSystem, .memoryPressure, .pressureTrigger: merge = .or
        case .dataReplace, .read, .write: merge = .latest
        }
    }

    deinit { lock.deallocate() }

    /// The element waiting for the task (nil: none), for tests and the dump.
    var pendingElement: UInt? { lock.withLock { pending } }

    /// Drops the element held: a read or write source's byte estimate taken before the
    /// task acted on the last one is stale; readiness is checked again instead.
    func dropPending() { lock.withLock { pending = nil } }

    /// A delivery's value (the source's queue, in place of the event handler).
    func offer(_ value: UInt) {
        let resume = lock.withLock { () -> CheckedContinuation<UInt?, Never>? in
            if ended { return nil }
            if let waiting = waiter {
                waiter = nil
                return waiting
            }
            switch (pending, merge) {
            case (nil, _), (_, .latest): pending = value
            case (let held?, .sum): pending = held &+ value
            case (let held?, .or): pending = held | value
            }
            return nil
        }
        resume?.resume(returning: value)
    }

    /// The source finished: its cancel handler ran. A waiting task gets nil.
    func end() {
        let resume = lock.withLock { () -> CheckedContinuation<UInt?, Never>? in
            ended = true
            pending = nil
            let waiting = waiter
            waiter = nil
            return waiting
        }
        resume?.resume(returning: nil)
    }

    /// The next element for `continuation`: the pending one at once, nil at once when
    /// ended, else the next delivery's. `cancelled`: the source is cancelled, so what is
    /// pending is dropped (no handler starts after `cancel()`) and the task waits for
    /// the end, which comes after the cancel handler.
    /// Traps, naming `source`, when another task already waits (two tasks iterating
    /// copies of one iterator at once).
    func wait(_ continuation: CheckedContinuation<UInt?, Never>, cancelled: Bool, source: DispatchSource) {
        let now = lock.withLock { () -> (ready: Bool, value: UInt?) in
            if ended { return (true, nil) }
            if cancelled { pending = nil }
            if let value = pending {
                pending = nil
                return (true, value)
            }
            if waiter != nil {
                ringletMisuse("two tasks wait for the next event of \(source.name) at once: iterate a "
                    + "source's events from one task")
            }
            waiter = continuation
            return (false, nil)
        }
        if now.ready { continuation.resume(returning: now.value) }
    }
}
#endif
