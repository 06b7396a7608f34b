import Synchronization

/// What the manager thread keeps for one source; only the manager touches it.
struct SourceRegistration {
    /// Registered with the kernel (or armed, for timers).
    var registered = false
    /// Cancellation began; the cancel handler is pushed once nothing can fire.
    var removing = false
    /// The slot in the manager's source table (poll-based sources), or -1.
    var slot = -1
    /// That slot's generation: completions for an older user of the slot are dropped.
    var generation: UInt32 = 0
    /// A poll request is in the kernel (a completion without IORING_CQE_F_MORE ends it).
    var pollArmed = false
    /// That poll was asked for as multishot (an EINVAL then means: a kernel before 5.13).
    var pollMultishot = false
    /// Polls in a row that ended with a transient error (re-armed up to 8 times).
    var failures = 0
    /// The timer in the manager's timer structure (timer sources).
    var timer: TimerQueue.Handle?
    /// The band whose workers keep the timer instead (`BandTimers`), or nil.
    var timerBand: BandTimers?
    /// The band whose epoll set watches the descriptor instead of a poll (read and
    /// write sources; `BandDescriptors`), or nil.
    var descriptorBand: BandDescriptors?
    /// A descriptor the manager opened for the source (pidfd, inotify), closed at the end.
    var ownedFD: Int32 = -1
    /// The watched file's size and link count when last looked at (file-system sources).
    var size: Int64 = 0
    var links: Int64 = 0
}

/// Signals watched by sources: one signalfd for all of them, and the handler path
/// (SignalCalls.install) for signals that reach a thread which does not block them.
struct SignalWatch {
    var sources: [[DispatchSource]] = Array(repeating: [], count: Int(SignalCalls.limit))
    var watched: [UInt8] = Array(repeating: 0, count: Int(SignalCalls.limit))
    var active: [Int32] = []
    var fd: Int32 = -1
    var pollArmed = false
    var counts: [UInt32] = Array(repeating: 0, count: Int(SignalCalls.limit))
    /// Per signal: the generation of the linger that keeps Ringlet's handler after the
    /// last source went (0: none; ManagerThread+Signals.swift).
    var lingering: [UInt64] = Array(repeating: 0, count: Int(SignalCalls.limit))
    var lingerGeneration: UInt64 = 0
}

extension ManagerThread {
    /// Counts `source` as active, or traps when the profile's `sources` capacity is
    /// spent (Architecture, "Fixed at start": a pool's exhaustion names the pool and its key).
    /// Called once per source, by `activate()`; `releaseSourceCapacity` undoes it
    /// when the source is cancelled (`DispatchSource.releaseCapacityIfHeld`).
    func claimSourceCapacity(for source: DispatchSource) {
        let capacity = configuration.sources
        let active = activeSources.wrappingAdd(1, ordering: .relaxed).newValue
        if active > capacity {
            activeSources.wrappingSubtract(1, ordering: .relaxed)
            let perSource = RuntimeConfiguration.bytesPerSource
            ringletMisuse("activating the \(source.name) would make \(active) active dispatch sources, but the board "
                + "profile key 'sources' allows \(capacity); cancel sources that are no longer needed, or raise "
                + "'sources' in the board profile (RuntimeConfiguration.sources). Raising it reserves nothing: each "
                + "further active source uses about \(perSource) bytes (the source, its serial queue and the manager's "
                + "registration, plus what its handlers capture), so 'sources' = \(capacity * 2) would allow up to "
                + "\(capacity * perSource) bytes more; the board's 'memoryBudgetBytes' counts 'sources' × \(perSource)")
        }
    }

    func releaseSourceCapacity() {
        activeSources.wrappingSubtract(1, ordering: .relaxed)
    }
}
