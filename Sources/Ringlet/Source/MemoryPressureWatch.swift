import Synchronization

/// What a memory-pressure source watches (`DispatchSource.makeMemoryPressureSource`): the
/// pressure file (PressureFiles), two PSI triggers on it — `some` stall at
/// `memoryWarningSomePercent` of the window for `.warning`, `full` stall at
/// `memoryCriticalFullPercent` for `.critical` — and a coalescing timer.
///
///   idle --activate--> triggers armed (level .normal)
///   a trigger fires --> level raised (posted), the recheck timer runs
///   each recheck: the stall shares since the last look give the level; .normal stops
///   the timer (nothing runs while the pressure stays low)
///   a trigger refused (EPERM, EINVAL) --> polling: the timer reads the file at
///   `memoryPressurePollMilliseconds` for as long as the source is active
///   no PSI at all --> the source is cancelled, with a message naming the cause
///
/// Everything but `start` and `stop` runs on one serial queue; the source gets a level
/// (posted, OR-merged) only when it changes and only if its mask has it.
// @unchecked Sendable: the state below is the queue's.
final class MemoryPressureWatch: @unchecked Sendable {
    enum Level: UInt {
        case normal = 1, warning = 2, critical = 4
    }

    private static let queue = DispatchQueue(label: "ringlet.memory-pressure", qos: .userInitiated)
    /// The watches by source, under `registryLock` (a `FutexLock`, whose ordering
    /// ThreadSanitizer sees).
    nonisolated(unsafe) private static var registry: [ObjectIdentifier: MemoryPressureWatch] = [:]
    private static let registryLock = FutexLock()

    private let source: DispatchSource
    private let mask: DispatchSource.MemoryPressureEvent
    private let warningPercent: Int
    private let criticalPercent: Int
    private let windowMicroseconds: Int
    private let recheckMilliseconds: Int
    private let pollMilliseconds: Int
    private var path = ""
    private var triggers: [DispatchSource] = []
    private var timer: DispatchSourceTimer?
    private var timerMilliseconds = 0
    private(set) var level = Level.normal
    private var polling = false
    private var ended = false
    /// The totals and the time of the last look.
    private var lastLook: (totals: PressureFiles.Totals, nanoseconds: UInt64)?

    private init(_ source: DispatchSource, mask: DispatchSource.MemoryPressureEvent, _ configuration: RuntimeConfiguration) {
        self.source = source
        self.mask = mask
        warningPercent = configuration.memoryWarningSomePercent
        criticalPercent = configuration.memoryCriticalFullPercent
        windowMicroseconds = configuration.memoryPressureWindowMilliseconds * 1000
        recheckMilliseconds = configuration.memoryPressureRecheckMilliseconds
        pollMilliseconds = configuration.memoryPressurePollMilliseconds
    }

    /// The source was registered (manager thread): its watch begins on the watch queue.
    static func start(_ source: DispatchSource, mask: DispatchSource.MemoryPressureEvent) {
        let watch = MemoryPressureWatch(source, mask: mask, Runtime.shared.configuration)
        registryLock.withLock { registry[ObjectIdentifier(source)] = watch }
        queue.async { watch.begin() }
    }

    /// The source is being let go (manager thread): its watch ends on the watch queue.
    static func stop(_ source: DispatchSource) {
        guard let watch = registryLock.withLock({ registry.removeValue(forKey: ObjectIdentifier(source)) }) else { return }
        queue.async { watch.end() }
    }

    /// The watch of `source`, for tests.
    static func watch(of source: DispatchSource) -> MemoryPressureWatch? {
        registryLock.withLock { registry[ObjectIdentifier(source)] }
    }

    /// Whether the file is read on a timer because the kernel refused a trigger.
    var isPolling: Bool { Self.queue.sync { polling } }
    /// Whether the timer runs (a raised level, or polling).
    var isTimerRunning: Bool { Self.queue.sync { timer != nil } }
    /// The level in force.
    var currentLevel: Level { Self.queue.sync { level } }

    private func begin() {
        if ended { return }
        guard let file = PressureFiles.memoryFile() else {
            ringletWarning("\(source.name): the kernel has no pressure-stall information (PSI): "
                + "\(PressureFiles.systemMemoryFile) is missing or unreadable (a kernel built without CONFIG_PSI, or "
                + "booted with psi=0: boot with psi=1). Cancelling the source")
            source.cancel()
            return
        }
        path = file
        lastLook = look()
        do throws(Errno) {
            let warning = try PressureFiles.trigger(path, full: false, stallMicroseconds: share(warningPercent),
                                                    windowMicroseconds: windowMicroseconds)
            watchTrigger(warning, .warning)
            let critical = try PressureFiles.trigger(path, full: true, stallMicroseconds: share(criticalPercent),
                                                     windowMicroseconds: windowMicroseconds)
            watchTrigger(critical, .critical)
        } catch {
            for trigger in triggers { trigger.cancel() }
            triggers = []
            polling = true
            ringletWarning("\(source.name): the kernel refused a PSI trigger on \(path) (\(error.name)"
                + Self.refusalReason(error) + "); reading the file every \(pollMilliseconds) ms instead "
                + "('memoryPressurePollMilliseconds')")
            runTimer(every: pollMilliseconds)
        }
    }

    /// Why a trigger is refused, for the message.
    static func refusalReason(_ error: Errno) -> String {
        if error == .notPermitted || error == .permissionDenied {
            return ": before Linux 6.5 a trigger needs CAP_SYS_RESOURCE"
        }
        if error == .invalidArgument {
            return ": without CAP_SYS_RESOURCE the window must be a multiple of 2 s ('memoryPressureWindowMilliseconds')"
        }
        return ""
    }

    private func share(_ percent: Int) -> Int { windowMicroseconds * percent / 100 }

    private func watchTrigger(_ fd: Int32, _ level: Level) {
        let trigger = DispatchSource.makePressureTrigger(fileDescriptor: fd, queue: Self.queue)
        trigger.setEventHandler { [self] in triggerFired(level) }
        trigger.activate()
        triggers.append(trigger)
    }

    private func end() {
        ended = true
        for trigger in triggers { trigger.cancel() }
        triggers = []
        timer?.cancel()
        timer = nil
    }

    /// A trigger fired: the stall crossed its threshold within the window.
    private func triggerFired(_ raised: Level) {
        if ended { return }
        lastLook = look()
        if raised.rawValue > level.rawValue { set(raised) }
        runTimer(every: recheckMilliseconds)
    }

    /// The timer: the level the stall shares since the last look give.
    private func recheck() {
        if ended { return }
        guard let now = look() else { return }
        defer { lastLook = now }
        guard let before = lastLook, now.nanoseconds > before.nanoseconds else { return }
        set(Self.level(from: before, to: now, warningPercent: warningPercent, criticalPercent: criticalPercent))
        if level == .normal && !polling { stopTimer() }
    }

    /// The level of the stall between two looks: `full` stall for `criticalPercent` of
    /// the time or more is `.critical`, `some` stall for `warningPercent` `.warning`.
    static func level(from before: (totals: PressureFiles.Totals, nanoseconds: UInt64),
                      to after: (totals: PressureFiles.Totals, nanoseconds: UInt64),
                      warningPercent: Int, criticalPercent: Int) -> Level {
        let elapsed = max((after.nanoseconds - before.nanoseconds) / 1000, 1)
        let some = (after.totals.some &- before.totals.some) * 100 / elapsed
        let full = (after.totals.full &- before.totals.full) * 100 / elapsed
        if full >= UInt64(criticalPercent) { return .critical }
        if some >= UInt64(warningPercent) { return .warning }
        return .normal
    }

    private func look() -> (totals: PressureFiles.Totals, nanoseconds: UInt64)? {
        guard let totals = try? PressureFiles.totals(path) else { return nil }
        return (totals, MonotonicClock.nanoseconds)
    }

    private func set(_ new: Level) {
        if new == level { return }
        level = new
        if new == .critical { MemoryTrim.trim() }
        let event = DispatchSource.MemoryPressureEvent(rawValue: new.rawValue)
        if mask.contains(event) { source.post(event.rawValue) }
    }

    private func runTimer(every milliseconds: Int) {
        if timer != nil && timerMilliseconds == milliseconds { return }
        timer?.cancel()
        let interval = DispatchTimeInterval.milliseconds(milliseconds)
        let made = DispatchSource.makeTimerSource(queue: Self.queue)
        made.setEventHandler { [self] in recheck() }
        made.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(milliseconds / 10))
        made.activate()
        timer = made
        timerMilliseconds = milliseconds
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
    }
}
