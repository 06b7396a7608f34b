import Ringlet

/// Misuse of the main queue, on the real main thread (MainQueueMisuseTests reads the
/// probe's stderr and exit status):
///
///   dispatch-main-from-main-item  dispatchMain() inside a main-queue item: a trap
///   drain-main-queue-from-main-item  Runtime.drainMainQueue() inside one: a trap
///   sync-onto-main-target         the main thread, outside dispatchMain(), syncs onto
///                                 a queue that targets the main queue: a trap
///   main-sync-while-main-waits    a worker's DispatchQueue.main.sync while the main
///                                 thread waits on a semaphore: reported
///   main-actor-never-drained      @MainActor work and no dispatchMain(): reported
///   drained-never-reported        work comes, some grace periods apart, while
///                                 dispatchMain() drains: no report
enum MainQueueMisuse: String {
    case dispatchMainFromMainItem = "dispatch-main-from-main-item"
    case syncOntoMainTarget = "sync-onto-main-target"
    case mainSyncWhileMainWaits = "main-sync-while-main-waits"
    case mainActorNeverDrained = "main-actor-never-drained"
    case drainedNeverReported = "drained-never-reported"
    case drainMainQueueFromMainItem = "drain-main-queue-from-main-item"

    func run() -> Never {
        var configuration = RuntimeConfiguration(cores: 2)
        configuration.mainQueueGraceMilliseconds = self == .drainedNeverReported ? 50 : 200
        do {
            try Runtime.start(configuration: configuration)
        } catch {
            fail("Runtime.start failed: \(error)")
        }
        switch self {
        case .dispatchMainFromMainItem:
            DispatchQueue.main.async { dispatchMain() }
            dispatchMain()
        case .drainMainQueueFromMainItem:
            DispatchQueue.main.async { Runtime.drainMainQueue() }
            dispatchMain()
        case .syncOntoMainTarget:
            let child = DispatchQueue(label: "probe.main.child", target: .main)
            child.sync {}
            fail("sync onto a queue targeting the main queue returned on the main thread")
        case .mainSyncWhileMainWaits:
            DispatchQueue.global().async { DispatchQueue.main.sync {} }
            waitForReport(blockedIn: DispatchSemaphore(value: 0))
        case .mainActorNeverDrained:
            Task { @MainActor in fail("@MainActor work ran though nothing drains the main queue") }
            waitForReport(blockedIn: DispatchSemaphore(value: 0))
        case .drainedNeverReported:
            drainedNeverReported()
        }
    }

    /// The main thread stays in one semaphore wait until the runtime has reported the
    /// main queue (a timer on the pool looks for the report and signals), at most
    /// 30 s: never outside the wait when the report is made, however slow the machine.
    private func waitForReport(blockedIn semaphore: DispatchSemaphore) -> Never {
        let look = DispatchSource.makeTimerSource(queue: .global())
        look.setEventHandler {
            if Runtime.current.statistics.mainQueueStallReports > 0 { semaphore.signal() }
        }
        look.schedule(deadline: .now() + .milliseconds(10), repeating: .milliseconds(10))
        look.activate()
        if semaphore.wait(timeout: .now() + .seconds(30)) == .timedOut {
            fail("no report of the main queue that nothing drains within 30 s")
        }
        Runtime.exit(status: 0)
    }

    /// Items reach the main queue 60 ms apart (over a grace period of 50 ms) while
    /// dispatchMain() drains it; the last runs after a timer later than any look the
    /// watch could have scheduled.
    private func drainedNeverReported() -> Never {
        for index in 0..<5 {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(60 * index)) {
                DispatchQueue.main.async {}
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(60 * 5 + 200)) {
            DispatchQueue.main.async {
                let reports = Runtime.current.statistics.mainQueueStallReports
                if reports != 0 { fail("\(reports) report(s) of a main queue dispatchMain() drains") }
                Runtime.exit(status: 0)
            }
        }
        dispatchMain()
    }
}
