import Synchronization
extension DispatchQueue {
    /// Suspends the queue: items already running finish, no further item starts until
    /// a matching `resume()`. Counted. A no-op on global queues (as in GCD).
    func suspendQueue() {
        if isRoot { return }
        lock.withLock {
            state.suspendCount += 1
            setStopRequestedLocked(true)
        }
    }

    /// Undoes one `suspend()`; on an inactive queue with no suspension, activates it.
    /// Traps when the queue is neither suspended nor inactive (over-resume).
    func resumeQueue() {
        if isRoot { return }
        lock.lock()
        if state.suspendCount == 0 {
            if state.isInactive {
                lock.unlock()
                activateQueue()
                return
            }
            lock.unlock()
            ringletMisuse("resume() on queue '\(label)' which is not suspended (over-resume): every resume() "
                + "must balance an earlier suspend()")
        }
        state.suspendCount -= 1
        setStopRequestedLocked(state.isSuspended)
        let action = wakeupIfNeededLocked()
        lock.unlock()
        perform(action)
    }

    /// Activates a queue created with `.initiallyInactive`; its pending items start.
    /// A no-op on an active queue.
    func activateQueue() {
        if isRoot { return }
        lock.lock()
        state.isInactive = false
        setStopRequestedLocked(state.isSuspended)
        let action = wakeupIfNeededLocked()
        lock.unlock()
        perform(action)
    }

    /// Queues whose `stopRequested` is set (suspended or inactive), process-wide: while
    /// there are none, a nested drain need not look at each queue beneath it
    /// (`ThreadContext.outerDrainStopped`), which in a chain 10,000 deep made every
    /// item cost 10,000 loads.
    static let queuesStopping = Atomic<Int>(0)

    /// Sets `stopRequested`, keeping `queuesStopping`. Invoked with the lock held.
    func setStopRequestedLocked(_ stop: Bool) {
        if stopRequested.exchange(stop, ordering: .acquiringAndReleasing) == stop { return }
        Self.queuesStopping.wrappingAdd(stop ? 1 : -1, ordering: .releasing)
    }

    /// Makes `queue` this queue's target: from the next wake-up on, this queue's
    /// items run on `queue` (pending items move as one unit). Traps on global and
    /// main queues, and when targets would form a cycle.
    func setTargetQueue(_ queue: DispatchQueue) {
        if isRoot || isMain {
            ringletMisuse("setTarget(queue: '\(queue.label)') on '\(label)': the targets of global queues and "
                + "of the main queue cannot change")
        }
        queue.rejectCycle(with: self)
        lock.lock()
        state.target = queue
        floorPriority = Self.floor(requested: requestedQoS, target: queue)
        lock.unlock()
    }
}

extension DispatchQueue {
    /// Queue attributes, as in Dispatch.
    public struct Attributes: OptionSet, Sendable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        /// Items may run in parallel; `.barrier` items run alone.
        public static let concurrent = Attributes(rawValue: 1 << 1)
        /// The queue starts inactive: nothing runs until `activate()`.
        public static let initiallyInactive = Attributes(rawValue: 1 << 2)
    }

    /// Accepted for source compatibility; Linux has no autorelease pools, so every
    /// value behaves as `.inherit`.
    public enum AutoreleaseFrequency: Sendable {
        case inherit
        case workItem
        case never
    }

    /// Deprecated GCD priorities, mapped to QoS classes as Dispatch maps them.
    public enum GlobalQueuePriority: Sendable {
        case high
        case `default`
        case low
        case background
    }

    /// The global queue for a deprecated priority (high → userInitiated, default →
    /// default, low → utility, background → background).
    public static func global(priority: GlobalQueuePriority) -> DispatchQueue {
        switch priority {
        case .high: return global(qos: .userInitiated)
        case .default: return global(qos: .default)
        case .low: return global(qos: .utility)
        case .background: return global(qos: .background)
        }
    }
}
