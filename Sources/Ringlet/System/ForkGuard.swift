import CRinglet

/// What the child of a fork(2) gets: the runtime's workers, manager thread and ring
/// stay in the parent (fork copies only the calling thread), so work the child
/// submits would never run and its waits would never end. Instead of hanging
/// silently, every entry point that needs those threads traps in the child with a
/// message that says so — the rule libdispatch applies on Darwin. A child that only
/// execs (or calls async-signal-safe functions) is unaffected.
enum ForkGuard {
    /// Arms the guard (once per process); the runtime calls it when it starts.
    static func install() { rl_fork_guard_install() }

    /// Traps when called in the child of a fork made after the runtime started.
    /// One load of a flag the fork handler sets; `call` names the entry point.
    @inline(__always)
    static func check(_ call: @autoclosure () -> String) {
        if rl_in_forked_child() != 0 { trap(call()) }
    }

    @inline(never)
    private static func trap(_ call: String) -> Never {
        ringletMisuse("\(call) in the child of fork() (pid \(ThreadControl.processID)): Ringlet's worker threads, "
            + "manager thread and io_uring stay in the parent (pid \(rl_fork_guard_parent())), so nothing would ever "
            + "run here. Call exec*() in the child (or use posix_spawn), or fork before the runtime starts")
    }
}
