/// The configuration a machine gets when nobody chose one (`derived()`, and the
/// `generic` profile), and the defaults of profile keys that follow the memory
/// budget: the pools grow with the machine's memory instead of staying at one size
/// that is too small for a workstation and too large for a watch.
///
///   memoryBudgetBytes = RAM / 4                        (unless a profile sets it)
///   workNodes         = budget / 32 / 48 bytes         a power of two, 4096...67108864
///   sources           = budget / 32 / bytesPerSource   a power of two, 256...1048576
///
/// So the node pool and the source records each get at most a 32nd of the budget:
///
///   RAM        budget     workNodes   sources
///   512 MiB    128 MiB       65536      4096
///   1 GiB      256 MiB      131072      8192
///   2 GiB      512 MiB      262144     16384
///   8 GiB        2 GiB     1048576     65536
///   24 GiB       6 GiB     4194304    131072
///
/// The pool's pages are touched only when that many items are pending at once, and
/// a source costs memory only while it is active, so a large bound costs nothing
/// until it is used.
extension RuntimeConfiguration {
    /// What one active dispatch source costs (the same on x86-64 and arm64, which have
    /// the same pointer size): the `DispatchSource` object with its registration, its
    /// serial queue, their lock words and the queue's token node (as malloc rounds them,
    /// with its headers), and the manager's timer or poll entry. The two work nodes a
    /// source holds are not in it (`workNodes` counts them); user-data sources cost a
    /// little less. `SourceCapacityTests` checks the figure against the growth of
    /// resident memory. Handlers the program captures come on top.
    public static let bytesPerSource = 1024

    /// The share of the memory budget the derived pool sizes may each take (1/32).
    static let derivedShareDivisor = 32

    /// The configuration derived from this machine: its online CPUs, the pool sizes
    /// its memory budget allows (`derivedWorkNodes`, `derivedSources`), and the
    /// defaults of the other keys. The `generic` profile gives the same.
    public static func derived() -> RuntimeConfiguration {
        derived(cores: ThreadControl.onlineCPUs, memoryMegabytes: MachineFacts.currentMemoryMegabytes)
    }

    /// The derived configuration of a machine with `cores` CPUs and `memoryMegabytes` of RAM.
    public static func derived(cores: Int, memoryMegabytes: Int) -> RuntimeConfiguration {
        let budget = derivedBudget(memoryMegabytes: memoryMegabytes)
        var configuration = RuntimeConfiguration(cores: cores)
        configuration.workNodes = derivedWorkNodes(budgetBytes: budget)
        configuration.sources = derivedSources(budgetBytes: budget)
        return configuration
    }

    /// A quarter of the RAM: room for the runtime without crowding the program.
    public static func derivedBudget(memoryMegabytes: Int) -> Int { (memoryMegabytes << 20) / 4 }

    /// Work nodes in a 32nd of `budgetBytes`, rounded down to a power of two.
    public static func derivedWorkNodes(budgetBytes: Int) -> Int {
        powerOfTwo(budgetBytes / derivedShareDivisor / MemoryLayout<WorkNode>.stride, in: 4096...(1 << 26))
    }

    /// Active sources in a 32nd of `budgetBytes` at `bytesPerSource`, rounded down to a power of two.
    public static func derivedSources(budgetBytes: Int) -> Int {
        powerOfTwo(budgetBytes / derivedShareDivisor / bytesPerSource, in: 256...(1 << 20))
    }

    /// The largest power of two ≤ `value`, kept within `range` (whose bounds are powers of two).
    private static func powerOfTwo(_ value: Int, in range: ClosedRange<Int>) -> Int {
        if value <= range.lowerBound { return range.lowerBound }
        if value >= range.upperBound { return range.upperBound }
        return 1 << (Int.bitWidth - 1 - value.leadingZeroBitCount)
    }
}
