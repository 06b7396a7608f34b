import Glibc
import Ringlet

// An async main with only `import Ringlet`, as a new user writes one
// (ConcurrencyMainTests). Ringlet's executors are installed when the program loads, so
// this main's tasks, actors, @MainActor hops and sleeps run on the pool and the main
// queue. Started with one argument, the scenario; exits 0 when it held, else 1 after
// saying what failed on stdout. Every wait is bounded by a Ringlet timer (20 s).
//
//   start-first   the first line starts the runtime with its own configuration (nothing
//                 has run yet); tasks, a task group, an actor ping-pong, @MainActor hops,
//                 sleeps and 256 tasks run on the pool; threads never exceed it
//   first-use     no Runtime.start: the first task starts the runtime with the board
//                 first use chooses, and the same holds
//   start-late    a task runs first; Runtime.start afterwards throws .alreadyStarted,
//                 whose message names the cause and the fix
//   held-then-started
//                 a @MainActor job held, then Runtime.current starts the runtime: the
//                 job runs on the main thread
//   unused        the main never uses Ringlet: no thread but the main one starts
//   toolchain     run with RINGLET_SWIFT_CONCURRENCY=toolchain: tasks stay on the
//                 toolchain's threads, and runsSwiftConcurrency is false

func fail(_ message: String) -> Never {
    print("probe failed: \(message)")
    Runtime.exit(status: 1)
}

/// The process's threads now (/proc/self/task).
func threadCount() -> Int {
    guard let directory = opendir("/proc/self/task") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
    }
    return count
}

/// Whether the calling thread is one of Ringlet's pool threads (named ringlet-w/r).
func onPoolThread() -> Bool {
    let fd = open("/proc/thread-self/comm", O_RDONLY)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var name = [UInt8](repeating: 0, count: 32)
    let count = read(fd, &name, name.count)
    let text = String(decoding: name.prefix(max(count, 0)), as: UTF8.self)
    return text.hasPrefix("ringlet-w") || text.hasPrefix("ringlet-r")
}

actor Counter {
    var value = 0
    func bump() -> Int { value += 1; return value }
}

/// Tasks, a group, an actor ping-pong, main-actor hops and sleeps; checks where they ran
/// and that the process's threads never exceed the pool's.
func exerciseConcurrency() async {
    let statistics = Runtime.statistics
    // The threads before the runtime started (main), and ThreadSanitizer's background
    // thread, which it starts with the process's second thread.
    let limit = statistics.workers + statistics.reserve + statistics.managerThreads + statistics.ioThreads
        + threadsBeforeRinglet + sanitizerThreads
    let detached = await Task.detached { onPoolThread() }.value
    if !detached { fail("a detached task ran off the pool") }
    let sum = await withTaskGroup(of: Int.self) { group in
        for i in 1...64 { group.addTask { onPoolThread() ? i : -100_000 } }
        return await group.reduce(0, +)
    }
    if sum != 64 * 65 / 2 { fail("a task group's child ran off the pool (sum \(sum))") }
    let counter = Counter()
    for _ in 0..<1000 { _ = await counter.bump() }
    if await counter.value != 1000 { fail("the actor ping-pong lost a turn") }
    let onMain = await MainActor.run { Runtime.isMainThread }
    if !onMain { fail("MainActor.run ran off the main thread") }
    let slept = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<256 {
            group.addTask {
                try? await Task.sleep(for: .milliseconds(20), tolerance: .milliseconds(20))
                return onPoolThread()
            }
        }
        return await group.allSatisfy { $0 }
    }
    if !slept { fail("a sleeping task resumed off the pool") }
    if !Runtime.current.runsSwiftConcurrency { fail("runsSwiftConcurrency is false") }
    let threads = threadCount()
    if threads > limit { fail("\(threads) threads, more than the pool's \(limit)") }
    print("threads \(threads) of at most \(limit)")
}

/// Ends the process if the main does not finish within 20 s (a Ringlet timer).
func watchdog() {
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(20)) {
        fail("the async main did not finish within 20 s")
    }
}

let threadsBeforeRinglet = threadCount()
/// 1 in a ThreadSanitizer build (its runtime defines __tsan_init), else 0.
let sanitizerThreads = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil ? 1 : 0
let scenario = CommandLine.arguments.dropFirst().first ?? ""
switch scenario {
case "start-first":
    do {
        try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
    } catch {
        fail("Runtime.start on the first line failed: \(error)")
    }
    if Runtime.current.configuration.cores != 2 { fail("the runtime did not take the configuration") }
    watchdog()
    await exerciseConcurrency()
case "first-use":
    let ran = await Task.detached { onPoolThread() }.value
    if !ran { fail("the first task ran off the pool") }
    watchdog()
    await exerciseConcurrency()
case "start-late":
    _ = await Task.detached { 1 }.value
    do {
        try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
        fail("Runtime.start after a task did not throw")
    } catch {
        let text = "\(error)"
        guard case .alreadyStarted = error, text.contains("Swift concurrency's first job"),
              text.contains("RINGLET_BOARD") else { fail("Runtime.start after a task threw \(text)") }
    }
case "held-then-started":
    // A main-actor job held before the start, then the runtime started without any
    // queue use: the main thread's drain moves the job (publishing the runtime's parts
    // first, outside the move's lock).
    // The bound is alarm(2), not a Ringlet timer: a queue's use would publish the parts.
    alarm(20)
    let ran = Task { @MainActor in Runtime.isMainThread }
    _ = Runtime.current
    if await !ran.value { fail("the held @MainActor job ran off the main thread") }
case "unused":
    var total = 0
    for i in 0..<1000 { total &+= i }
    let threads = threadCount()
    if threads != threadsBeforeRinglet {
        fail("\(threads) threads in an async main that never used Ringlet, \(threadsBeforeRinglet) at its start (total \(total))")
    }
case "toolchain":
    let detached = await Task.detached { onPoolThread() }.value
    if detached { fail("with RINGLET_SWIFT_CONCURRENCY=toolchain a task ran on the pool") }
    _ = DispatchQueue(label: "probe.start").sync { 1 }
    if Runtime.current.runsSwiftConcurrency { fail("runsSwiftConcurrency is true with the toolchain's executors kept") }
default:
    fail("unknown scenario '\(scenario)'")
}
Runtime.exit(status: 0)
