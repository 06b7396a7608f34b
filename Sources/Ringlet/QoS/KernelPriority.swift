
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

    /// The I/O priority of a request issued at `level` (ioprio_set(2): class << 13 |
    /// level). Background reads and writes use the idle class, which the disk
    /// scheduler serves only when nothing else waits; the other classes map to
    /// best-effort levels 1 (user-interactive) to 6 (utility). Neither needs privilege.
    static func ioPriority(for level: QoSLevel) -> UInt16 {
        let bestEffort = ThreadControl.ioPriorityBestEffort
        switch level {
        case .background: return ThreadControl.ioPriorityIdle
        case .utility: return bestEffort | 6
        case .default, .unspecified: return bestEffort | 4
        case .userInitiated: return bestEffort | 2
        case .userInteractive: return bestEffort | 1
        }
    }

    private static let warned = WorkerBand.allCases.map { _ in WarnOnce() }

    private static func warnOnce(_ band: WorkerBand, _ message: String) {
        if warned[band.rawValue].claim() { ringletWarning(message) }
    }
}
