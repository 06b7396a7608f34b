import Glibc
@_spi(RingletNet) import Ringlet

/// What a receiving side grants a message's QoS claim: never more than the sending
/// thread's real scheduling settings allow. The thread must be a thread of the process
/// the kernel says sent the packet (SCM_CREDENTIALS); its policy and nice value give
/// the highest class it may claim, the way Ringlet's bands set them (SCHED_IDLE or
/// nice 19: background; the utility band's nice or more: utility; above 0: default;
/// else any). A claim that cannot be checked — the thread has exited, or is not in
/// that process — gets at most default.
enum SenderCheck {
    static func granted(claim: DispatchQoS, threadID: Int32, processID: Int32) -> DispatchQoS {
        let claim = claim.qosClass == .unspecified ? DispatchQoS.default : claim
        guard let ceiling = ceiling(threadID: threadID, processID: processID) else {
            return ServiceQoS.lower(claim, .default)
        }
        return ServiceQoS.lower(claim, ceiling)
    }

    /// SCHED_IDLE (<linux/sched.h>; Glibc's module leaves it out).
    static let schedIdle: Int32 = 5

    /// The highest QoS `threadID` of `processID` may claim, nil when that cannot be read.
    static func ceiling(threadID: Int32, processID: Int32) -> DispatchQoS? {
        guard threadID > 0, processID > 0, access("/proc/\(processID)/task/\(threadID)", F_OK) == 0 else { return nil }
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(threadID))
        if nice == -1 && errno != 0 { return nil }
        let policy = sched_getscheduler(threadID)
        if policy < 0 { return nil }
        if policy == schedIdle || nice >= 19 { return .background }
        let utilityNice = Int32(Runtime.current.configuration.utilityNice)
        if utilityNice > 0 && nice >= utilityNice { return .utility }
        if nice > 0 { return .default }
        return .userInteractive
    }
}
