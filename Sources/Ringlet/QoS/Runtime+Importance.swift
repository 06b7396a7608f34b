import Synchronization

/// What a service library needs from the runtime to carry urgency across processes
/// (`Importance`; the Services article): the QoS and activity of the calling thread's
/// work, a process clamp, boosts, and a queue the clamp leaves alone.
@_spi(RingletNet)
extension Runtime {
    /// The QoS of the work the calling thread runs now (user-interactive on the main
    /// thread outside any item, unspecified on another thread outside any item).
    public static var currentQoS: DispatchQoS { ThreadContext.current.currentPriority.qos }

    /// The activity what the calling thread submits belongs to (`Breadcrumb`'s 24-bit id).
    public static var currentActivity: UInt32 { Breadcrumb(raw: ThreadContext.current.submitCrumb).activity }

    /// Clamps the process's work to `qosClass` (nil: no clamp), from now on: what is
    /// submitted afterwards to any queue but the main queue and exempt queues runs at
    /// most at that class, unless a boost marks it. `.unspecified` means no clamp.
    public static func clampWork(to qosClass: DispatchQoS.QoSClass?) {
        let level = qosClass.map { DispatchQoS(qosClass: $0, relativePriority: 0).level }
        Importance.setClamp(level == .unspecified ? nil : level)
    }

    /// The class the process's work is clamped to, nil when none.
    public static var workClamp: DispatchQoS.QoSClass? { Importance.clamp?.qosClass }

    /// Runs `body` with what the calling thread submits carrying another process's
    /// activity (a message's): the items' breadcrumbs then say they came from thread
    /// `threadID` there, in activity `activity`, so the dump and the reports of this
    /// process name the same activity as the sender's.
    public static func submitting(fromRemoteThread threadID: Int32, activity: UInt32, _ body: () -> Void) {
        let context = ThreadContext.current
        let saved = context.submitCrumb
        let origin = Breadcrumb.threadBit | (UInt32(bitPattern: threadID) & 0x7FFF_FFFF)
        context.submitCrumb = Breadcrumb(origin: origin, activity: activity, hops: 1).raw | (saved & Importance.boostBit)
        body()
        context.submitCrumb = saved
    }

    /// Begins a boost for one urgent request: submit its handler inside
    /// `ImportanceBoost.submitBoosted`, and `end()` it once the reply is sent.
    public static func beginBoost() -> ImportanceBoost { ImportanceBoost() }
}

@_spi(RingletNet)
extension DispatchQueue {
    /// Leaves this queue's items out of the process clamp (a service's receive lane:
    /// the step that reads a request must not wait behind the clamped work it is to
    /// boost past). Call before sending items to it.
    public func exemptFromWorkClamp() { importanceExempt.store(true, ordering: .relaxed) }
}

@_spi(RingletNet)
extension Runtime {
    /// The calling thread's kernel id (gettid), which a service message carries so the
    /// receiving side can check the thread's real scheduling.
    public static var currentThreadID: Int32 { ThreadControl.threadID }
}
