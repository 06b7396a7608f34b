import Glibc
import Ringlet
import Synchronization

// What the tests check on a process's real main thread, which their own child
// processes do not have: `@MainActor` jobs and `DispatchQueue.main` items in one FIFO
// on the main thread, driven by `dispatchMain()` (ConcurrencyMainTests), and misuse of
// the main queue (MainQueueMisuse.swift, MainQueueMisuseTests). Started with one
// argument, the scenario; exits 0 when it held, else 1 after saying what failed on
// stdout.
//
//   main-actor      a task the synchronous main starts on the main actor runs on the
//                   main thread, and so do hops to the main actor from the pool
//   dispatch-main   @MainActor tasks and DispatchQueue.main items share one FIFO
//   poll-loop       a main thread in its own poll(2) loop serves the main queue
//                   through Runtime.mainQueueDescriptor() (OtherLoop.swift)
//   main-actor-before-start
//                   a @MainActor task made before anything started the runtime runs
//                   once dispatchMain() starts it
//   swift-concurrency-off
//                   the runtime starts with 'swiftConcurrency' false before any job:
//                   Swift concurrency goes back to the toolchain's executors
//
// The main is synchronous; RingletAsyncMainProbe has the async ones.

@main
struct ConcurrencyProbe {
    static func main() {
        let scenario = CommandLine.arguments.dropFirst().first ?? ""
        if let misuse = MainQueueMisuse(rawValue: scenario) { misuse.run() }
        if scenario == "swift-concurrency-off" { Probe.swiftConcurrencyOff() }
        if scenario == "main-actor-before-start" {
            // Nothing has started the runtime: the job waits (MainJobsBeforeStart) until
            // dispatchMain() starts it, then runs.
            Task { @MainActor in Runtime.exit(status: Probe.onMainThread ? 0 : 1) }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(20)) {
                fail("the @MainActor job held before the start never ran")
            }
            dispatchMain()
        }
        do {
            try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
        } catch {
            fail("Runtime.start failed: \(error)")
        }
        guard Runtime.current.runsSwiftConcurrency else { fail("Ringlet did not install its executors") }
        switch scenario {
        case "main-actor":
            Task { @MainActor in
                if !Probe.onMainThread { fail("a @MainActor task started by main ran off the main thread") }
                let fromPool = await Task.detached { await MainActor.run { Probe.onMainThread } }.value
                if !fromPool { fail("a MainActor.run from the pool ran off the main thread") }
                if !Probe.onMainThread { fail("the @MainActor task resumed off the main thread") }
                Runtime.exit(status: 0)
            }
        case "dispatch-main":
            Task.detached {
                if let failure = await Probe.sharedFIFO() { fail(failure) }
                Runtime.exit(status: 0)
            }
        case "poll-loop":
            OtherLoop.run()
        default:
            fail("unknown scenario '\(scenario)'")
        }
        dispatchMain()
    }
}

extension Probe {
    /// The `swiftConcurrency` key false, with no job run yet: the executors installed
    /// at load are handed back, and a task runs on the toolchain's threads.
    static func swiftConcurrencyOff() -> Never {
        var configuration = RuntimeConfiguration(cores: 2)
        configuration.swiftConcurrency = false
        do {
            try Runtime.start(configuration: configuration)
        } catch {
            fail("Runtime.start failed: \(error)")
        }
        if Runtime.current.runsSwiftConcurrency { fail("runsSwiftConcurrency is true with 'swiftConcurrency' false") }
        let onPool = Atomic<Int>(-1)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            onPool.store(Probe.threadName.hasPrefix("ringlet-") ? 1 : 0, ordering: .releasing)
            done.signal()
        }
        if done.wait(timeout: .now() + .seconds(20)) != .success { fail("the task never ran") }
        if onPool.load(ordering: .acquiring) != 0 { fail("a task ran on Ringlet's pool with 'swiftConcurrency' false") }
        Runtime.exit(status: 0)
    }

    /// The calling thread's name (/proc/thread-self/comm).
    static var threadName: String {
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &bytes, bytes.count)
        return String(decoding: bytes.prefix(max(count, 0)).prefix { $0 != 10 }, as: UTF8.self)
    }
}

enum Probe {
    /// Whether the calling thread is the process's main thread (`dispatchPrecondition`
    /// on the main queue holds only there, and only inside its work).
    static var onMainThread: Bool { Runtime.isMainThread }

    /// `DispatchQueue.main` items and `@MainActor` tasks submitted alternately from a
    /// pool thread run in submission order, on the main thread.
    static func sharedFIFO() async -> String? {
        let log = Log()
        let group = DispatchGroup()
        let main = DispatchQueue.main
        for index in 0..<200 {
            group.enter()
            if index % 2 == 0 {
                main.async { log.append(index, onMain: onMainThread); group.leave() }
            } else {
                Task { @MainActor in log.append(index, onMain: onMainThread); group.leave() }
            }
        }
        let finished = await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume(returning: true) }
        }
        if !finished { return "the main thread never ran them" }
        if log.offMain > 0 { return "\(log.offMain) ran off the main thread" }
        return log.values == Array(0..<200) ? nil : "main queue and main actor out of order: \(log.values.prefix(20))"
    }
}

/// Values appended from the main thread, read after.
final class Log: Sendable {
    private let lock = Mutex<(values: [Int], offMain: Int)>(([], 0))
    func append(_ value: Int, onMain: Bool) {
        lock.withLock { $0.values.append(value); if !onMain { $0.offMain += 1 } }
    }
    var values: [Int] { lock.withLock { $0.values } }
    var offMain: Int { lock.withLock { $0.offMain } }
}

func fail(_ message: String) -> Never {
    print("probe failed: \(message)")
    Runtime.exit(status: 1)
}
