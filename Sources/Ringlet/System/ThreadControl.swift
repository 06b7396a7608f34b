import CRinglet

/// The Swift side of the thread syscalls: start, name, kernel priority, counts.
/// The only Swift file besides the futex wrappers that calls the thread parts of
/// CRinglet.
enum ThreadControl {
    /// Starts a detached thread running `body`. Throws the errno when the kernel or
    /// libc refuses (EAGAIN: RLIMIT_NPROC or memory; EINVAL: bad stack size).
    static func start(stackBytes: Int, _ body: @escaping () -> Void) throws(Errno) {
        let box = Unmanaged.passRetained(ThreadBody(body))
        let result = rl_thread_start({ raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
        }, box.toOpaque(), UInt64(stackBytes))
        if result != 0 {
            box.release()
            throw Errno(negated: result)
        }
    }

    static func setName(_ name: String) {
        var bytes = name.utf8CString
        bytes.withUnsafeMutableBufferPointer { rl_thread_set_name($0.baseAddress) }
    }

    static var threadID: Int32 { rl_thread_id() }

    /// The name of thread `id` of this process (/proc/self/task/<id>/comm), or nil
    /// when it is gone. For breadcrumbs naming the thread that submitted an item.
    static func threadName(_ id: Int32) -> String? {
        guard var bytes = try? MachineFiles.read(path: "/proc/self/task/\(id)/comm", limit: 64) else { return nil }
        while let last = bytes.last, last == 10 || last == 0 { bytes.removeLast() }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
    static var processID: Int32 { rl_process_id() }
    static var onlineCPUs: Int { Int(rl_cpu_count()) }

    /// Threads of this process right now (/proc/self/task), or nil when unreadable.
    static var processThreadCount: Int? {
        let n = rl_process_thread_count()
        return n < 0 ? nil : Int(n)
    }

    /// Context switches summed over this process's threads whose names start with
    /// `prefix`, or nil when /proc is unreadable.
    static func contextSwitches(threadsNamed prefix: String) -> Int? {
        var bytes = prefix.utf8CString
        let total = bytes.withUnsafeMutableBufferPointer { rl_context_switches($0.baseAddress) }
        return total < 0 ? nil : Int(total)
    }

    /// Voluntary context switches (blocks and parks) of the threads whose names start
    /// with `prefix`: unlike preemptions, another process's load does not add to them.
    static func voluntaryContextSwitches(threadsNamed prefix: String) -> Int? {
        var bytes = prefix.utf8CString
        let total = bytes.withUnsafeMutableBufferPointer { rl_voluntary_context_switches($0.baseAddress) }
        return total < 0 ? nil : Int(total)
    }

    static func setNice(_ nice: Int32) -> Errno? {
        let r = rl_thread_set_nice(nice)
        return r == 0 ? nil : Errno(negated: r)
    }

    static func setSchedIdle() -> Errno? {
        let r = rl_thread_set_sched_idle()
        return r == 0 ? nil : Errno(negated: r)
    }

    /// The calling thread's nice value and whether it runs at SCHED_IDLE.
    static var kernelPriority: (nice: Int32, isIdle: Bool) {
        var idle: Int32 = 0
        let nice = rl_thread_get_nice(&idle)
        return (nice, idle != 0)
    }

    /// I/O priority classes (ioprio_set(2)), shifted into place: best effort (levels
    /// 0...7 go in the low bits) and idle.
    static let ioPriorityBestEffort = UInt16(RL_IOPRIO_CLASS_BE) << 13
    static let ioPriorityIdle = UInt16(RL_IOPRIO_CLASS_IDLE) << 13

    /// The calling thread's CPU-time clock, which any thread may read with
    /// `cpuNanoseconds(of:)`; nil when the C library refuses.
    static var cpuClock: Int32? {
        var clock: Int32 = 0
        return rl_thread_cpu_clock(&clock) == 0 ? clock : nil
    }

    /// CPU time a thread has used, through the clock `cpuClock` gave it; nil when
    /// unreadable (the thread exited).
    static func cpuNanoseconds(of clock: Int32) -> UInt64? {
        let value = rl_thread_cpu_ns(clock)
        return value < 0 ? nil : UInt64(value)
    }

    /// Whether thread `tid` of this process sleeps in the kernel right now (state S or
    /// D in /proc/self/task/<tid>/stat): blocked in a syscall, not runnable.
    static func isSleepingInKernel(_ tid: Int32) -> Bool {
        let state = rl_thread_state(tid)
        return state == Int32(UInt8(ascii: "S")) || state == Int32(UInt8(ascii: "D"))
    }

    /// A spin-wait hint to the CPU (PAUSE on x86, YIELD on AArch64).
    @inline(__always)
    static func spinHint() { rl_cpu_relax() }

    /// Spins until `arrived()` holds (true) or the monotonic clock reaches `deadline`
    /// (false), looking with growing gaps (1, 2, 4 ... 32 spin hints): every look may
    /// pull a cache line that the thread being waited for writes away from it.
    @inline(__always)
    static func spin(until deadline: UInt64, for arrived: () -> Bool) -> Bool {
        var pauses = 1
        while !arrived() {
            if MonotonicClock.nanoseconds >= deadline { return false }
            for _ in 0..<pauses { spinHint() }
            pauses = min(pauses * 2, 32)
        }
        return true
    }

    /// Gives the processor to another runnable thread (sched_yield(2)): a wait on
    /// another thread's next store that has outlasted a short spin.
    static func yieldProcessor() { rl_thread_yield() }

    /// Sleeps about `nanoseconds` (nanosleep(2), with the thread's timer slack): a wait
    /// on another thread's store that spins and yields did not end. An interrupted
    /// sleep ends early; callers look again either way.
    static func nap(nanoseconds: UInt64) { _ = rl_nap_ns(nanoseconds) }

    /// Ends the process with `status` (exit(3): atexit handlers run, stdio is flushed).
    static func exitProcess(_ status: Int32) -> Never { rl_exit(status) }

    /// The calling thread's context pointer (a retained `ThreadContext`), or nil.
    @inline(__always)
    static var contextPointer: UnsafeMutableRawPointer? { rl_tls_get() }

    /// Sets the calling thread's context pointer; `release`, registered with
    /// `onThreadExit`, gets it back when the thread exits.
    static func setContextPointer(_ pointer: UnsafeMutableRawPointer) { rl_tls_set(pointer) }

    /// What to do with a thread's context pointer when the thread exits (a C function
    /// pointer: a closure that captures nothing).
    static func onThreadExit(_ release: @convention(c) (UnsafeMutableRawPointer?) -> Void) {
        rl_tls_set_release(release)
    }

    static func environment(_ name: String) -> String? {
        var bytes = name.utf8CString
        let value = bytes.withUnsafeMutableBufferPointer { rl_getenv($0.baseAddress) }
        guard let value else { return nil }
        return String(cString: value)
    }
}

private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
