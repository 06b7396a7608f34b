import CRinglet

/// The memory operations of a trace ring (Observe/TraceBuffer.swift): one thread
/// writes its ring's words with plain stores and publishes how many events it holds
/// with a release store; the thread that writes the trace file reads them while the
/// owner may still be recording. Relaxed atomics cost what plain loads and stores do
/// (a `mov` on x86-64 and AArch64) and keep ThreadSanitizer right about it.
enum TraceWords {
    @inline(__always)
    static func store(_ word: UnsafeMutablePointer<UInt64>, _ value: UInt64) { rl_word_store(word, value) }

    @inline(__always)
    static func load(_ word: UnsafeMutablePointer<UInt64>) -> UInt64 { rl_word_load(word) }

    /// A store that makes every earlier store of the thread visible to `acquire`.
    @inline(__always)
    static func publish(_ word: UnsafeMutablePointer<UInt64>, _ value: UInt64) { rl_word_publish(word, value) }

    @inline(__always)
    static func acquire(_ word: UnsafeMutablePointer<UInt64>) -> UInt64 { rl_word_acquire(word) }

    /// Keeps the loads made before it ahead of those after it.
    @inline(__always)
    static func fence() { rl_fence_acquire() }
}

/// The process's exit: a hook that runs when it exits through exit(3) (`Runtime.exit`
/// too) or a return from `main`, not when a signal or `_exit` ends it.
enum ProcessExit {
    /// Registers `hook` with atexit(3); false when the C library's table is full.
    static func atExit(_ hook: @convention(c) () -> Void) -> Bool { rl_at_exit(hook) == 0 }
}
