// The fixed pool: starting the runtime creates exactly `poolThreads` threads and the
// manager thread, and no load — blocking items, Ringlet waits, floods of queues —
// ever adds one. Each test runs in a child process (an exit test) so the thread count before the runtime
// started is known.

import Testing
@testable import Ringlet

@Suite struct ThreadCountTests {
    @Test func startingCreatesExactlyThePoolThreads() async {
        await #expect(processExitsWith: .success) {
            ThreadCountScenarios.startCreatesPoolThreads(RuntimeConfiguration(cores: 2))
        }
    }

    @Test func startingHonoursTheConfiguration() async {
        await #expect(processExitsWith: .success) {
            ThreadCountScenarios.startCreatesPoolThreads(
                RuntimeConfiguration(cores: 1, workersPerCore: 3, reservePerCore: 2))
        }
    }

    @Test func lazyStartUsesTheDerivedConfiguration() async {
        await #expect(processExitsWith: .success) { ThreadCountScenarios.lazyStart() }
    }

    @Test func heavyLoadNeverAddsAThread() async {
        await #expect(processExitsWith: .success) { ThreadCountScenarios.heavyLoad() }
    }

    @Test func startAfterStartThrows() async {
        await #expect(processExitsWith: .success) { ThreadCountScenarios.secondStart() }
    }
}

enum ThreadCountScenarios {
    /// Threads the runtime itself adds on start: the pool and the manager thread, and
    /// on the epoll backend its I/O helper threads (call it once the runtime runs).
    static func runtimeThreads(_ configuration: RuntimeConfiguration) -> Int {
        let helpers = Runtime.current.backend.backend == .epoll ? ManagerThread.epollHelperThreads : 0
        return configuration.poolThreads + 1 + helpers
    }

    static func threadCount() -> Int { ThreadControl.processThreadCount ?? -1 }

    /// `Runtime.statistics.processThreads` agrees with /proc read just before and after.
    static func statisticsCountTheProcessThreads() {
        let low = threadCount()
        let counted = Runtime.statistics.processThreads
        let high = threadCount()
        #expect((min(low, high)...max(low, high)).contains(counted), "statistics: \(counted), /proc: \(low), \(high)")
    }

    static func startCreatesPoolThreads(_ configuration: RuntimeConfiguration) {
        let before = processThreadIDs()
        startRuntime(configuration)
        let added = threadsAdded(since: before)
        #expect(!before.isEmpty, "/proc/self/task unreadable")
        #expect(added == runtimeThreads(configuration),
                "start added \(added) threads for \(configuration.poolThreads) pool threads + manager")
        #expect(Runtime.statistics.runtimeThreads == runtimeThreads(configuration))
        let statistics = Runtime.statistics
        #expect(statistics.workers == configuration.workers)
        #expect(statistics.reserve == configuration.reserve)
        statisticsCountTheProcessThreads()
        #expect(statistics.reserveInUse == 0 && statistics.blockedThreads == 0)
        // Every pool thread is parked once the start settles: an idle runtime.
        #expect(eventually { Runtime.statistics.parkedThreads == configuration.poolThreads },
                "parked: \(Runtime.statistics.parkedThreads) of \(configuration.poolThreads)")
    }

    static func lazyStart() {
        let before = processThreadIDs()
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue(label: "test.threads.lazy").async { ran.signal() }
        #expect(waited(ran))
        let configuration = Runtime.current.configuration
        #expect(configuration == RuntimeConfiguration.derived())
        #expect(threadsAdded(since: before) == runtimeThreads(configuration))
    }

    static func heavyLoad() {
        let configuration = RuntimeConfiguration(cores: 2)
        let before = processThreadIDs()
        startRuntime(configuration)
        let added = runtimeThreads(configuration)
        var peak = threadsAdded(since: before)
        let group = DispatchGroup()

        // 256 items that each block 20 ms outside Ringlet (the bench's thread-explosion
        // workload), at every QoS.
        let classes: [DispatchQoS.QoSClass] = [.background, .utility, .default, .userInitiated, .userInteractive]
        for index in 0..<256 {
            DispatchQueue.global(qos: classes[index % classes.count]).async(group: group) { sleepMilliseconds(20) }
        }
        // Items blocked in Ringlet waits, released from this (non-pool) thread.
        let semaphore = DispatchSemaphore(value: 0)
        for _ in 0..<32 { DispatchQueue.global().async(group: group) { semaphore.wait() } }
        // Many serial queues, syncs onto busy queues, and concurrentPerform.
        let queues = (0..<64).map { DispatchQueue(label: "test.threads.q\($0)") }
        for (index, queue) in queues.enumerated() {
            queue.async(group: group) { sleepMilliseconds(1) }
            DispatchQueue.global().async(group: group) { queue.sync { _ = index } }
        }
        DispatchQueue.global().async(group: group) {
            DispatchQueue.concurrentPerform(iterations: 64) { _ in sleepMilliseconds(1) }
        }
        var released = 0
        let start = monotonicNanoseconds
        while group.wait(timeout: .now() + 0.002) == .timedOut, secondsSince(start) < 30 {
            peak = max(peak, threadsAdded(since: before))
            if released < 32 {
                semaphore.signal()
                released += 1
            }
        }
        while released < 32 {
            semaphore.signal()
            released += 1
        }
        #expect(group.wait(timeout: deadline()) == .success, "the load did not finish")
        peak = max(peak, threadsAdded(since: before))
        #expect(peak <= added, "\(peak) threads appeared at the peak; the runtime may add only \(added)")
        #expect(threadsAdded(since: before) == added)
        statisticsCountTheProcessThreads()
    }

    static func secondStart() {
        startRuntime(RuntimeConfiguration(cores: 1, workersPerCore: 2))
        do throws(RuntimeError) {
            try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
            Issue.record("a second start did not throw")
        } catch {
            guard case .alreadyStarted = error else {
                Issue.record("a second start threw \(error)")
                return
            }
            #expect(error.description.contains("after the runtime had started"))
        }
        // The first configuration stays in force.
        #expect(Runtime.current.configuration.workers == 2)
    }
}
