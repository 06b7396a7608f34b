import Synchronization

/// The runtime's own answer to `.critical` memory pressure, seen by any memory-pressure
/// source (MemoryPressureWatch): the pages of the free work nodes at the top of the node
/// pool (`WorkNodePool.trim`) and of the I/O buffers kept for reuse (`IOBufferPool.trim`)
/// go back to the system. The pools keep their capacity and budget, so limits stay those
/// fixed at start; the pages are faulted in again when next used. Counted in
/// `RuntimeStatistics.memoryPressureTrims` and `memoryTrimmedBytes`, and in the dump.
enum MemoryTrim {
    private static let trimCount = Atomic<Int>(0)
    private static let trimmedBytes = Atomic<Int>(0)

    static var trims: Int { trimCount.load(ordering: .relaxed) }
    static var bytes: Int { trimmedBytes.load(ordering: .relaxed) }

    /// Gives back what can be given; returns the bytes.
    @discardableResult
    static func trim() -> Int {
        let parts = RuntimeParts.shared
        let given = parts.pool.takeUnretainedValue().trim()
            + (parts.manager.takeUnretainedValue().ioEngineIfMade?.pool.trim() ?? 0)
        trimCount.wrappingAdd(1, ordering: .relaxed)
        trimmedBytes.wrappingAdd(given, ordering: .relaxed)
        return given
    }
}
