import CRinglet

/// A pool thread that runs out of stack says so — the thread, the queue whose item
/// it ran, its stack's size and the key that sets it — before the fault goes on to
/// what would have handled it without Ringlet (ringlet_stack_guard.c).
enum StackGuard {
    /// Installs the fault handler, once per process (at the runtime's start).
    static func install() {
        let result = rl_stack_guard_install { buffer, size in StackGuard.writeCurrentLabel(into: buffer, size: size) }
        if result < 0 {
            ringletWarning("sigaction for SIGSEGV refused (\(Errno(negated: result).name)); a pool thread that runs "
                + "out of stack will end the process without saying which queue it ran")
        }
    }

    /// The label of the queue the calling thread runs an item of, copied into
    /// `buffer` without allocating (a signal handler calls this); its length.
    private static func writeCurrentLabel(into buffer: UnsafeMutablePointer<CChar>?, size: UInt) -> UInt {
        guard let buffer, let context = ThreadContext.currentIfPresent,
              let queue = context.currentQueueReference else { return 0 }
        return queue._withUnsafeGuaranteedRef { queue in
            queue.label.utf8.withContiguousStorageIfAvailable { bytes -> UInt in
                let count = min(bytes.count, Int(size))
                guard count > 0, let base = bytes.baseAddress else { return 0 }
                UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: count)
                return UInt(count)
            } ?? 0
        }
    }
}
