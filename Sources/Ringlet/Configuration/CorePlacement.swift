/// Which CPUs each worker band runs on, on a big.LITTLE board (Architecture, "Strict QoS":
/// CPU placement from `cpu_capacity`).
///
/// When a profile's `coreCapacities` are unequal, the cores with the highest capacity
/// are "big" and the rest "small":
///
///   band        runs on       why
///   ----------  ------------  ------------------------------------------------
///   high        big cores     default and higher QoS: the user waits for it
///   utility     small cores   long work the user does not wait on: the efficient cores
///   background  small cores   the same, at SCHED_IDLE
///   reserve     the cores of  covers a blocked worker of any band: pinned to
///               the work      the cores of the band whose work it takes
///
/// Each worker pins itself once when it starts (sched_setaffinity(2)), next to its
/// nice value (`KernelPriority`); a reserve worker each time the band of the work it
/// takes changes (`Worker.takeCores`). A profile for another board may name CPUs this
/// machine lacks: then nothing is pinned and one warning says so (`forMachine`).
public struct CorePlacement: Sendable, Equatable {
    /// CPUs with the highest capacity: the high band runs here.
    public let bigCores: [Int]
    /// The other CPUs: the utility and background bands run here.
    public let smallCores: [Int]

    /// Nil when every capacity is equal (or there are none): nothing to place.
    public init?(capacities: [Int]) {
        guard let biggest = capacities.max(), capacities.contains(where: { $0 != biggest }) else { return nil }
        bigCores = capacities.indices.filter { capacities[$0] == biggest }
        smallCores = capacities.indices.filter { capacities[$0] != biggest }
    }

    /// The CPUs a worker of `band` is pinned to, or nil for no pinning (reserve, which
    /// takes the CPUs of the band whose work it runs).
    func cpus(for band: WorkerBand) -> [Int]? {
        switch band {
        case .high: return bigCores
        case .utility, .background: return smallCores
        case .reserve: return nil
        }
    }

    /// `placement` if this machine has every CPU it names; else nil with one warning
    /// (a profile written for another board must still run here, unpinned).
    static func forMachine(_ placement: CorePlacement?, board: String, onlineCPUs: Int) -> CorePlacement? {
        guard let placement else { return nil }
        let highest = max(placement.bigCores.max() ?? 0, placement.smallCores.max() ?? 0)
        if highest >= onlineCPUs {
            ringletWarning("board profile '\(board)' places workers on CPUs up to \(highest) but this machine has "
                + "\(onlineCPUs) online CPUs; workers are not pinned (use the profile for this board, or set "
                + "'coreCapacities' to equal values to turn placement off)")
            return nil
        }
        return placement
    }

    /// Pins the calling thread to the CPUs of `band`: each worker once, at start; a
    /// reserve worker for the band whose work it takes. A refusal (a cpuset that
    /// excludes the CPUs, for instance) leaves the thread where it was, with one warning.
    func apply(band: WorkerBand) {
        guard let cpus = cpus(for: band) else { return }
        if let error = MachineFiles.pinCurrentThread(to: cpus), CorePlacement.warned.claim() {
            ringletWarning("could not pin \(band.name)-band workers to CPUs \(CorePlacement.commaSeparated(cpus)) "
                + "(\(error.name)); they run on any CPU")
        }
    }

    private static let warned = WarnOnce()

    /// "0,1,2,3": CPUs or capacities as messages and profiles write them.
    static func commaSeparated(_ values: [Int]) -> String {
        var text = ""
        for (index, value) in values.enumerated() { text += (index == 0 ? "" : ",") + "\(value)" }
        return text
    }
}

/// One worker band as a profile sizes it, for reports (`ringlet board`). Not
/// Equatable: comparing its String would pull Unicode tables into Embedded builds.
public struct BandPlan: Sendable {
    /// "high", "utility", "background" or "reserve".
    public let band: String
    /// Threads of that band.
    public let threads: Int
    /// CPUs they are pinned to, or nil for any CPU.
    public let cpus: [Int]?
}

extension BoardProfile {
    /// The pool threads this profile creates, band by band, with their CPUs (before
    /// the machine check of `Runtime.placement`: a profile for a bigger board names
    /// CPUs that a smaller machine lacks).
    public var bandPlan: [BandPlan] {
        let placement = self.placement
        return configuration.workerPlan.map { band, count in
            BandPlan(band: band.name, threads: count, cpus: placement?.cpus(for: band))
        }
    }
}

extension MachineFacts {
    /// The running kernel's release (uname(2)), e.g. "6.1.0-18-arm64", or "".
    public static var kernelRelease: String { MachineFiles.kernelRelease }
}
