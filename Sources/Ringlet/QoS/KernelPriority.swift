/// Carries a worker band's QoS into the kernel, once per thread at start (Linux does
/// not let an unprivileged thread raise its priority back, see `WorkerBand`).
/// A refused call degrades to "no kernel hint" with one warning line per band.
enum KernelPriority {
    static func apply(band: WorkerBand, configuration: RuntimeConfiguration) {
        switch band {
        case .high, .reserve:
            return
        case .utility:
            if let error = ThreadControl.setNice(Int32(configuration.utilityNice)) {
                warnOnce(band, "could not set nice \(configuration.utilityNice) for utility workers (\(error.name)); "
                    + "they run at the default CPU priority")
            }
        case .background:
            if configuration.backgroundSchedIdle, ThreadControl.setSchedIdle() == nil { return }
            if let error = ThreadControl.setNice(19) {
                warnOnce(band, "could not set SCHED_IDLE or nice 19 for background workers (\(error.name)); "
                    + "they run at the default CPU priority")
            }
        }
    }

    private static let warned = WarnedBands()

    private static func warnOnce(_ band: WorkerBand, _ message: String) {
        if warned.claim(band) { ringletWarning(message) }
    }
}

private final class WarnedBands: @unchecked Sendable {
    private let lock = FutexLock()
    private var bands: [Bool] = Array(repeating: false, count: WorkerBand.allCases.count)

    func claim(_ band: WorkerBand) -> Bool {
        lock.withLock {
            if bands[band.rawValue] { return false }
            bands[band.rawValue] = true
            return true
        }
    }
}
