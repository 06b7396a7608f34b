// Ringlet as Swift concurrency's default executor: tasks, async let, task groups and
// default actors run on the pool's threads, the thread count never grows, jobs obey
// strict QoS, and they are counted. Each scenario is a child process
// (ConcurrencySupport.swift).

import Synchronization
import Testing
@testable import Ringlet

@Suite struct ConcurrencyExecutorTests {
    @Test func everyKindOfJobRunsOnPoolThreads() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                actor Tally {
                    var threads: [Bool] = []
                    func note() { threads.append(onPoolThread) }
                }
                let tally = Tally()
                var seen: [Bool] = [onPoolThread]
                async let child = onPoolThread
                seen.append(await child)
                let grouped = await withTaskGroup(of: Bool.self) { group in
                    for _ in 0..<64 { group.addTask { onPoolThread } }
                    return await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                seen += grouped
                seen.append(await Task { onPoolThread }.value)
                seen.append(await Task.detached(priority: .background) { onPoolThread }.value)
                for _ in 0..<16 { await tally.note() }
                seen += await tally.threads
                let off = seen.filter { !$0 }.count
                return off == 0 ? nil : "\(off) of \(seen.count) jobs ran on threads Ringlet did not create"
            }
        }
    }

    @Test func tenThousandTasksAddNoThread() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let before = processThreadIDs()
                let peak = Peak(0)
                let sum = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<10_000 {
                        group.addTask {
                            await Task.yield()
                            if index % 500 == 0 { peak.raise(to: threadsAdded(since: before)) }
                            return 1
                        }
                    }
                    return await group.reduce(0, +)
                }
                let highest = peak.value
                if sum != 10_000 { return "\(sum) of 10,000 tasks finished" }
                return !before.isEmpty && highest == 0 ? nil : "\(highest) threads appeared with 10,000 tasks"
            }
        }
    }

    @Test func blockingTasksAddNoThread() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let before = processThreadIDs()
                let peak = Peak(0)
                let semaphore = DispatchSemaphore(value: 0)
                await withTaskGroup(of: Void.self) { group in
                    for index in 0..<256 {
                        group.addTask {
                            // Half block in a Ringlet wait (a reserve thread may cover
                            // them), half in the kernel (nothing covers them).
                            if index % 2 == 0 {
                                _ = semaphore.wait(timeout: .now() + .milliseconds(20))
                            } else {
                                sleepMilliseconds(20)
                            }
                            peak.raise(to: threadsAdded(since: before))
                        }
                    }
                }
                let highest = peak.value
                return !before.isEmpty && highest == 0 ? nil
                    : "\(highest) threads appeared with 256 tasks blocking 20 ms"
            }
        }
    }

    /// One high-band worker, held by an item: the jobs queued meanwhile run most urgent
    /// first once it is free (strict QoS), whatever order they were created in.
    @Test func jobsRunInPriorityOrderUnderContention() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run(RuntimeConfiguration(cores: 1, workersPerCore: 2, lowQoSWorkers: 1)) {
                let gate = Gate()
                let held = DispatchSemaphore(value: 0)
                let order = Recorder<UInt8>()
                let done = DispatchGroup()
                // Created on a thread outside the pool so nothing waits for the held worker.
                let setup = DispatchSemaphore(value: 0)
                try? ThreadControl.start(stackBytes: 0) {
                    DispatchQueue.global(qos: .userInteractive).async { held.signal(); gate.pass() }
                    _ = held.wait(timeout: deadline())
                    let priorities: [TaskPriority] = [.medium, .high, .medium, .high, .medium, .high]
                    for priority in priorities {
                        done.enter()
                        Task.detached(priority: priority) { order.append(priority.rawValue); done.leave() }
                    }
                    // Every job is queued behind the held worker before it is let go.
                    _ = eventually { Runtime.statistics.jobsPending >= priorities.count }
                    gate.open()
                    setup.signal()
                }
                guard waited(setup), waited(done) else { return "timed out" }
                let values = order.values
                let high = TaskPriority.high.rawValue, medium = TaskPriority.medium.rawValue
                return values == [high, high, high, medium, medium, medium] ? nil : "order was \(values)"
            }
        }
    }

    @Test func jobsAreCountedInTheStatistics() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let before = Runtime.statistics
                for _ in 0..<100 { await Task.detached(priority: .utility) {}.value }
                // A job is counted when swift_job_run returns, which may be just after
                // its awaiter resumed elsewhere: wait (bounded) for the last counts.
                _ = eventually {
                    let now = Runtime.statistics
                    return now.jobsRun - before.jobsRun >= 100
                        && now.itemsRunPerQoS.utility - before.itemsRunPerQoS.utility >= 100
                }
                let after = Runtime.statistics
                if !after.swiftConcurrencyOnRinglet { return "statistics say Ringlet is not the executor" }
                if after.jobsRun - before.jobsRun < 100 { return "jobsRun grew by \(after.jobsRun - before.jobsRun)" }
                let utility = after.itemsRunPerQoS.utility - before.itemsRunPerQoS.utility
                return utility >= 100 ? nil : "only \(utility) utility items counted for 100 utility tasks"
            }
        }
    }

    @Test func theKeyTurnsTheExecutorOff() async {
        await #expect(processExitsWith: .success) {
            var configuration = twoCoreConfiguration()
            configuration.swiftConcurrency = false
            await MainActor.run { startRuntime(configuration) }
            if Runtime.current.runsSwiftConcurrency { ConcurrencyChild.fail("installed with the key off") }
            let onPool = await Task.detached { onPoolThread }.value
            if onPool { ConcurrencyChild.fail("a task ran on the pool with the key off") }
            Runtime.exit(status: 0)
        }
    }

    /// This bundle keeps the toolchain's executors (KeepToolchainExecutors.swift): a
    /// runtime started inside a task leaves Swift concurrency there without a word, as
    /// asked, and installs nothing.
    @Test func aStartInAProgramThatKeptTheToolchainsExecutorsLeavesThem() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            #expect(!Runtime.current.runsSwiftConcurrency)
            #expect(!Runtime.statistics.swiftConcurrencyOnRinglet)
        }
        #expect(result?.standardErrorText.contains("Swift concurrency stays") == false)
    }

    @Test func profilesCarryTheKey() throws {
        let profile = try BoardProfile.parse("board = t\nswiftConcurrency = false\n", file: "t.profile")
        #expect(profile.configuration.swiftConcurrency == false)
        #expect(BoardProfileKey.swiftConcurrency.kind == .boolean)
        #expect(RuntimeConfiguration(cores: 2).swiftConcurrency)
    }
}

/// The largest value seen, updated from many threads.
final class Peak: Sendable {
    private let storage: Atomic<Int>
    init(_ value: Int) { storage = Atomic(value) }
    var value: Int { storage.load(ordering: .relaxed) }

    func raise(to candidate: Int) {
        var current = storage.load(ordering: .relaxed)
        while candidate > current {
            let (exchanged, original) = storage.compareExchange(expected: current, desired: candidate, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
