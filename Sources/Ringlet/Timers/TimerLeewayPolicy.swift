/// How much leeway a timer really gets: what the caller asked for, widened for
/// background and utility timers so that they coalesce with others and wake the
/// board less (Architecture, "Energy-efficient timers"). `.strict` timers are never widened.
///
/// The minimum for a low-QoS timer is a percentage of its interval (of its delay for
/// a one-shot), capped. Default and higher QoS keep exactly what they asked for.
struct TimerLeewayPolicy: Equatable {
    /// Minimum leeway of background timers, in percent of the interval (`backgroundLeewayPercent`).
    var backgroundPercent: UInt64 = 10
    /// Cap of that minimum (`backgroundLeewayMaxMilliseconds`).
    var backgroundCap: UInt64 = 1_000_000_000
    /// Minimum leeway of utility timers, in percent of the interval (`utilityLeewayPercent`).
    var utilityPercent: UInt64 = 5
    /// Cap of that minimum (`utilityLeewayMaxMilliseconds`).
    var utilityCap: UInt64 = 250_000_000

    /// The leeway to schedule with. `period` is the interval of a repeating timer,
    /// or the delay until the first deadline of a one-shot.
    func leeway(requested: UInt64, period: UInt64, level: QoSLevel, strict: Bool) -> UInt64 {
        if strict { return requested }
        let minimum: UInt64
        switch level {
        case .background: minimum = min(period / 100 &* backgroundPercent, backgroundCap)
        case .utility: minimum = min(period / 100 &* utilityPercent, utilityCap)
        default: return requested
        }
        return max(requested, minimum)
    }
}
