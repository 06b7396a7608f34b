import CRinglet

/// Memory the runtime asks the C library for directly: the work-node pool (reserved
/// once at start; pages are touched only as nodes are first used) and the release of
/// memory a `DispatchData` was handed with `.free` or `.unmap`.
enum Memory {
    /// Reserves `bytes` (malloc(3) below 2 MiB, else a mapping of its own kept out of
    /// transparent huge pages); nil when the system refuses (RLIMIT_AS, overcommit).
    /// The fault hook can refuse it too. Given back with `release`.
    static func reserve(_ bytes: UInt64) -> UnsafeMutableRawPointer? {
        if SyscallFaults.take(.reserveMemory) != nil { return nil }
        return rl_reserve_memory(bytes)
    }

    /// Gives back what `reserve` gave, with the same `bytes`.
    static func release(_ pointer: UnsafeMutableRawPointer?, bytes: UInt64) { rl_release_memory(pointer, bytes) }

    /// free(3).
    static func free(_ pointer: UnsafeMutableRawPointer?) { rl_free(pointer) }

    /// munmap(2) of `length` bytes at `pointer`.
    static func unmap(_ pointer: UnsafeMutableRawPointer?, length: Int) { rl_munmap(pointer, UInt64(length)) }

    /// Gives the pages of `length` bytes at the page-aligned `pointer` back to the system
    /// (madvise MADV_DONTNEED); the memory stays the caller's and reads as zeros when next
    /// touched. Whether the kernel took them.
    static func giveBackPages(_ pointer: UnsafeMutableRawPointer, length: Int) -> Bool {
        rl_give_back_pages(pointer, UInt64(length)) == 0
    }

    /// The address-space limit (RLIMIT_AS) in bytes, or -1 when unlimited.
    static var addressSpaceLimit: Int { Int(rl_address_space_limit()) }

    /// Caps the C library's malloc arenas (`mallocArenas`; 0 leaves its default; no
    /// effect where the C library has no such setting).
    static func limitMallocArenas(_ arenas: Int) { _ = rl_malloc_arena_max(Int32(arenas)) }
}

/// Counters written by one thread and read by any: the owner adds with relaxed
/// loads and stores (no locked instruction on the per-item path).
enum SingleWriterCounter {
    @inline(__always)
    static func add(_ slot: UnsafeMutablePointer<Int64>, _ delta: Int64) { rl_counter_add(slot, delta) }

    @inline(__always)
    static func read(_ slot: UnsafeMutablePointer<Int64>) -> Int64 { rl_counter_read(slot) }
}
