// Helpers shared by the behavioural suites: recorders that observe order across
// threads, atomic per-slot counters, a gate that blocks a pool thread *without* a
// Ringlet wait (so no reserve worker covers it), bounded polling, and clocks.
//
// Every wait here is bounded: a broken runtime makes a test fail, never hang.

import CRinglet
import Glibc
import CRingletTestSupport
import Synchronization
import Testing
@testable import Ringlet

// MARK: Time

/// Whether ThreadSanitizer or AddressSanitizer instruments this run (`make tsan`,
/// `make asan`): instrumented code runs several times slower.
let sanitizerActive = rl_test_sanitizer_active() != 0

/// Whether ThreadSanitizer instruments this run. Under it a thread that only spins does
/// not only run: the sanitizer's runtime records its accesses in trace memory it maps and
/// faults in as it goes, under locks of its own, and may sleep in the kernel there. In
/// `make test`'s TSan stage (dozens of instrumented processes on two cores, load average
/// near 20) spinning workers were twice seen asleep for a cover period and covered as
/// blocked in the kernel, as the cover should for a thread that sleeps. Tests whose point
/// is that a spinning worker is never covered run without it.
let threadSanitizerActive = rl_test_thread_sanitizer_active() != 0

/// How long a test waits for something that normally happens within milliseconds —
/// four times longer under a sanitizer, where `make test` runs the whole suite with
/// its dozens of child processes on instrumented code at once.
let patienceSeconds = sanitizerActive ? 40.0 : 10.0

/// A deadline `seconds` from now, for `wait(timeout:)`.
func deadline(_ seconds: Double = patienceSeconds) -> DispatchTime { .now() + seconds }

/// The ids of this process's threads now (/proc/self/task); empty when unreadable.
func processThreadIDs() -> Set<Int32> {
    var room = 256
    while true {
        var ids = [Int32](repeating: 0, count: room)
        let count = Int(ids.withUnsafeMutableBufferPointer { rl_test_thread_ids($0.baseAddress, Int32(room)) })
        if count < 0 { return [] }
        if count <= room { return Set(ids.prefix(count)) }
        room = count * 2
    }
}

/// Threads that exist now and did not in `before`. Counted by id, not by total: a
/// thread of the test harness (the toolchain's Dispatch, idle) may end meanwhile.
func threadsAdded(since before: Set<Int32>) -> Int { processThreadIDs().subtracting(before).count }

/// CLOCK_MONOTONIC in nanoseconds.
var monotonicNanoseconds: UInt64 { rl_clock_monotonic_ns() }

/// Seconds elapsed since `start` (a `monotonicNanoseconds` reading).
func secondsSince(_ start: UInt64) -> Double { Double(monotonicNanoseconds &- start) / 1e9 }

/// Sleeps the calling thread with nanosleep(2): not a Ringlet wait, so a pool thread
/// sleeping here stays "running" as far as the scheduler knows.
func sleepMilliseconds(_ milliseconds: Int) { rl_sleep_ns(Int64(milliseconds) * 1_000_000) }

/// Polls `condition` every millisecond until it holds or `seconds` pass; returns
/// whether it held. Running out of a patience of a second or more records an issue
/// with the live dump (`reportTimedOutWait`).
@discardableResult
func eventually(within seconds: Double = patienceSeconds, sourceLocation: SourceLocation = #_sourceLocation,
                _ condition: () -> Bool) -> Bool {
    let start = monotonicNanoseconds
    while true {
        if condition() { return true }
        if secondsSince(start) > seconds {
            reportTimedOutWait("eventually", patience: seconds, since: start, sourceLocation: sourceLocation)
            return false
        }
        sleepMilliseconds(1)
    }
}

/// Waits shorter than this are negative checks ("nothing happens within 0.1 s"),
/// which expect to run out: they report nothing.
let shortestReportedWait = 1.0

/// A bounded wait of `patience` seconds ran out: records an issue (forwarded to the
/// parent from a child process) carrying how long it really took, the load average
/// (a starved machine gives up long after its patience) and the live dump —
/// pool threads, queues holding work, armed timers and whether they are overdue,
/// sources, pools — so a stall on CI says what was stuck. Only on failure: the dump
/// costs milliseconds (a second at most, when the manager does not answer). No dump
/// in a process where no runtime has started, which the dump would start.
func reportTimedOutWait(_ what: String, patience: Double, since start: UInt64, sourceLocation: SourceLocation) {
    guard patience >= shortestReportedWait else { return }
    var text = "\(what): not done within its patience of \(patience) s (gave up after \(secondsSince(start)) s; "
        + "load average \(loadAverage))"
    if let runtime = Runtime.startedIfAny {
        text += "; the runtime now:\n" + runtime.report()
    } else {
        text += "; no runtime has started in this process"
    }
    if let capture = TimedOutWaitReports.capture {
        capture.append(text)
    } else {
        Issue.record(Comment(rawValue: text), sourceLocation: sourceLocation)
    }
}

/// Where `reportTimedOutWait` puts its reports: issues, or, in the test support's own
/// tests, a recorder (so that proving the report does not print three dumps a run).
enum TimedOutWaitReports {
    @TaskLocal static var capture: Recorder<String>?
}

/// /proc/loadavg's first three fields ("?" when unreadable).
var loadAverage: String {
    let fd = open("/proc/loadavg", O_RDONLY)
    if fd < 0 { return "?" }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 128)
    let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if count <= 0 { return "?" }
    return String(decoding: bytes.prefix(count), as: UTF8.self).split(separator: " ").prefix(3).joined(separator: " ")
}

/// Keeps the CPU busy for `seconds` (a CPU-bound item, unlike `sleepMilliseconds`).
func spin(seconds: Double) {
    let start = monotonicNanoseconds
    var sink = 0
    while secondsSince(start) < seconds { sink &+= 1 }
    precondition(sink >= 0)
}

// MARK: Recording

/// An append-only list shared by threads; the order of `values` is the order in
/// which the appends happened.
final class Recorder<Element>: @unchecked Sendable {
    private let lock = FutexLock()
    private var elements: [Element] = []
    deinit { lock.deallocate() }

    func append(_ element: Element) { lock.withLock { elements.append(element) } }
    var values: [Element] { lock.withLock { elements } }
    var count: Int { lock.withLock { elements.count } }
}

/// An integer other threads update atomically.
final class AtomicCounter: @unchecked Sendable {
    private let storage = Atomic<Int>(0)

    init(_ value: Int = 0) { storage.store(value, ordering: .sequentiallyConsistent) }

    @discardableResult
    func increment() -> Int { storage.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue }
    @discardableResult
    func increment(by delta: Int) -> Int { storage.wrappingAdd(delta, ordering: .sequentiallyConsistent).newValue }
    @discardableResult
    func decrement() -> Int { storage.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue }
    var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

/// Tracks how many threads are inside a region at once, and the most ever seen.
final class OverlapMeter: @unchecked Sendable {
    private let inside = Atomic<Int>(0)
    private let peak = Atomic<Int>(0)

    /// Runs `body` counted as inside the region.
    @discardableResult
    func measure<R>(_ body: () -> R) -> R {
        let now = inside.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        var seen = peak.load(ordering: .sequentiallyConsistent)
        while now > seen {
            let (exchanged, original) = peak.compareExchange(expected: seen, desired: now,
                                                             ordering: .sequentiallyConsistent)
            if exchanged { break }
            seen = original
        }
        defer { inside.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        return body()
    }

    /// Threads inside right now.
    var current: Int { inside.load(ordering: .sequentiallyConsistent) }
    /// The most threads ever inside at once.
    var maximum: Int { peak.load(ordering: .sequentiallyConsistent) }
}

/// One atomic counter per slot, for "every item ran exactly once" over many items.
final class SlotCounters: @unchecked Sendable {
    let count: Int
    private let slots: UnsafeMutablePointer<UInt32>

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        slots.initialize(repeating: 0, count: count)
    }

    deinit { slots.deallocate() }

    func increment(_ slot: Int) { _ = rl_atomic_add_u32(slots + slot, 1) }
    func value(_ slot: Int) -> UInt32 { rl_atomic_load_u32(slots + slot) }

    /// Slots whose count is not `expected`, at most `limit` of them (for messages).
    func slots(notEqualTo expected: UInt32, limit: Int = 10) -> [Int] {
        var wrong: [Int] = []
        for slot in 0..<count where value(slot) != expected {
            wrong.append(slot)
            if wrong.count == limit { break }
        }
        return wrong
    }

    /// How many slots hold exactly `expected`.
    func slotsEqual(to expected: UInt32) -> Int {
        var matching = 0
        for slot in 0..<count where value(slot) == expected { matching += 1 }
        return matching
    }
}

// MARK: Blocking without a Ringlet wait

/// A one-shot gate. Threads waiting on it stay runnable (they poll and yield the CPU,
/// never sleep in the kernel), so a pool thread held here is busy as far as the
/// scheduler knows: no reserve worker covers it, not even the kernel cover, which
/// covers only threads asleep in the kernel (KernelCoverTests). Use it to occupy
/// workers on purpose.
final class Gate: @unchecked Sendable {
    private let isOpenFlag = Atomic<Bool>(false)

    func open() { isOpenFlag.store(true, ordering: .sequentiallyConsistent) }
    var isOpen: Bool { isOpenFlag.load(ordering: .sequentiallyConsistent) }

    /// Returns true once the gate opens, false after `seconds` (then the caller goes on,
    /// so a failing test still ends).
    @discardableResult
    func pass(within seconds: Double = patienceSeconds, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let start = monotonicNanoseconds
        while !isOpen {
            if secondsSince(start) > seconds {
                reportTimedOutWait("a gate", patience: seconds, since: start, sourceLocation: sourceLocation)
                return false
            }
            sched_yield()
        }
        return true
    }
}

// MARK: Ringlet internals tests observe

/// Runs `body` on a thread of its own (not a pool worker) and returns at once.
func onOwnThread(_ body: @escaping @Sendable () -> Void) {
    do {
        try ThreadControl.start(stackBytes: 0) { body() }
    } catch {
        Issue.record("could not start a thread: \(error)")
    }
}

/// Runs `body(index)` on `count` threads of their own, index 0 to count - 1; the group
/// it returns is left once each has returned (or could not start, which is recorded).
func onOwnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        do throws(Errno) {
            try ThreadControl.start(stackBytes: 0) {
                body(index)
                done.leave()
            }
        } catch {
            Issue.record("could not start thread \(index) of \(count): \(error)")
            done.leave()
        }
    }
    return done
}

/// The QoS level the calling thread runs at, as the runtime sees it.
var currentLevel: QoSLevel { ThreadContext.current.currentPriority.level }

/// The QoS (class and relative priority) the calling thread runs at.
var currentQoS: DispatchQoS { ThreadContext.current.currentPriority.qos }

/// The band of the pool thread running the caller, nil outside the pool.
var currentBand: WorkerBand? { ThreadContext.current.worker?.band }

/// Waits for `semaphore` at most `seconds`; true when it was signalled (running out
/// records an issue with the live dump: `reportTimedOutWait`).
func waited(_ semaphore: DispatchSemaphore, seconds: Double = patienceSeconds,
            sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    let start = monotonicNanoseconds
    if semaphore.wait(timeout: deadline(seconds)) == .success { return true }
    reportTimedOutWait("a semaphore wait", patience: seconds, since: start, sourceLocation: sourceLocation)
    return false
}

/// Waits for `group` at most `seconds`; true when it emptied (running out records an
/// issue with the live dump: `reportTimedOutWait`).
func waited(_ group: DispatchGroup, seconds: Double = patienceSeconds,
            sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    let start = monotonicNanoseconds
    if group.wait(timeout: deadline(seconds)) == .success { return true }
    reportTimedOutWait("a group wait", patience: seconds, since: start, sourceLocation: sourceLocation)
    return false
}

/// An error with a payload, for typed-throws checks.
enum ProbeError: Error, Equatable {
    case failed(Int)
}

// MARK: Child processes (Swift Testing exit tests)

/// The signal Ringlet's traps raise (abort(3)).
let sigabrt: Int32 = 6

extension ExitTest.Result {
    /// What the child wrote to stderr, as text.
    var standardErrorText: String { String(decoding: standardErrorContent, as: UTF8.self) }
}

/// The configuration pool-occupancy tests start their child process with: a 2-core
/// board (2 high-band workers, 1 utility, 1 background, 2 reserve), whatever this
/// machine has, so the tests mean the same everywhere. The background band runs at
/// nice 19 rather than SCHED_IDLE: the suite runs dozens of child processes at once,
/// and a SCHED_IDLE thread on a saturated machine may get no CPU for many seconds,
/// which would time out tests that only need it to run at all (the tests of the
/// kernel priorities set `backgroundSchedIdle` themselves).
func twoCoreConfiguration(grace milliseconds: Int = 2000) -> RuntimeConfiguration {
    RuntimeConfiguration(cores: 2, backgroundSchedIdle: false, deadlockGraceMilliseconds: milliseconds)
}

/// Waits until every pool thread has parked (true) — at start, a thread the kernel
/// has not run yet is not parked, and work that arrives meanwhile may wake another
/// band's or a reserve worker instead, which tests that place items band by band
/// must rule out.
@discardableResult
func poolParked(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    eventually(sourceLocation: sourceLocation) { let s = Runtime.statistics; return s.parkedThreads == s.workers + s.reserve }
}

/// Starts the runtime in a child process with `configuration`; records an issue
/// (forwarded to the parent) when it refuses.
func startRuntime(_ configuration: RuntimeConfiguration) {
    do throws(RuntimeError) {
        try Runtime.start(configuration: configuration)
    } catch {
        Issue.record("Runtime.start failed: \(error)")
    }
}

// MARK: Reports on stderr

/// Waits for the runtime's own reports: `install(marker)` returns a closure that
/// answers whether a line containing `marker` has been written to stderr since.
enum StallProbe {
    static func install(_ marker: String) -> () -> Bool {
        let seen = Atomic<Bool>(false)
        let flag = UncheckedBox(seen)
        DiagnosticsObserver.hook.install { line in
            if line.contains(marker) { flag.value.store(true, ordering: .sequentiallyConsistent) }
        }
        return { flag.value.load(ordering: .sequentiallyConsistent) }
    }
}

/// Carries a non-copyable or non-Sendable value into a closure (tests only).
final class UncheckedBox<Value: ~Copyable>: @unchecked Sendable {
    let value: Value
    init(_ value: consuming Value) { self.value = value }
}

// MARK: Proof that nothing more is coming

/// Runs `body` on the manager thread, between its requests, and returns its result
/// (nil when the manager did not answer within the patience).
@discardableResult
func onManager<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable () -> R) -> R? {
    let box = UncheckedBox(Recorder<R>())
    let answered = DispatchSemaphore(value: 0)
    RuntimeParts.shared.manager.takeUnretainedValue().submit(.run { _ in
        box.value.append(body())
        answered.signal()
    })
    guard waited(answered, sourceLocation: sourceLocation) else { return nil }
    return box.value.values.first
}

/// Proof, instead of a sleep, that the runtime has caught up: the manager has gone
/// round its loop twice (reaping every completion the kernel had posted and firing
/// every timer that was due), then everything queued on `queue` by then has run.
/// A negative check ("no event came") made after this is not a race.
func settle(_ queue: DispatchQueue, sourceLocation: SourceLocation = #_sourceLocation) {
    onManager(sourceLocation: sourceLocation) {}
    onManager(sourceLocation: sourceLocation) {}
    queue.sync(flags: .barrier) {}
}

/// Whether a timer source has no deadline armed in the manager any more (a one-shot
/// that fired, a cancelled one, one never scheduled): then it cannot fire again.
func timerIsDisarmed(_ timer: DispatchSourceTimer, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    let source = timer as! DispatchSource
    return onManager(sourceLocation: sourceLocation) {
        source.registration.timer == nil && !(source.registration.timerBand?.isArmed(source) ?? false)
    } ?? false
}

/// Pool threads inside a Ringlet wait now: `Runtime.statistics.blockedThreads`
/// without the /proc reads the full statistics make (tests poll it every millisecond).
var blockedThreadCount: Int { Runtime.shared.scheduler.blockedThreads { _ in true } }
