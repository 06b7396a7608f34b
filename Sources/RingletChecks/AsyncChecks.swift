#if canImport(_Concurrency)
import _Concurrency
import Ringlet

// Async code on Ringlet's pool: tasks, async let, a task group, an actor on a serial
// queue and a sleep. In Embedded Swift the Concurrency library calls Ringlet's executor
// entry points; in full Swift the runtime installed its executors when it started
// (before the first task). Every wait is bounded by `timeout`.

/// Adds the async checks to `harness`.
func runAsyncChecks(_ harness: CheckHarness) {
    harness.run("Ringlet runs Swift concurrency's jobs") {
        Runtime.current.runsSwiftConcurrency ? nil : "the runtime left async code to another executor"
    }

    harness.run("tasks, async let and a task group run on the pool and are counted") {
        let jobsBefore = Runtime.statistics.jobsRun
        let failure = awaitCheck {
            async let doubled = twice(21)
            let summed = await withTaskGroup(of: Int.self, returning: Int.self) { group in
                for value in 1...100 { group.addTask { value } }
                var total = 0
                for await value in group { total += value }
                return total
            }
            let detached = await Task.detached { Runtime.isMainThread }.value
            if await doubled != 42 { return "async let gave a wrong value" }
            if summed != 5050 { return "the task group summed \(summed), not 5050" }
            return detached ? "a task ran on the main thread" : nil
        }
        if let failure { return failure }
        let ran = Runtime.statistics.jobsRun - jobsBefore
        return ran >= 100 ? nil : "only \(ran) jobs counted for 100 child tasks and more"
    }

    harness.run("a default actor runs its turns one at a time on the pool") {
        let tally = Tally()
        return awaitCheck {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 { group.addTask { await tally.increment() } }
            }
            let (value, onMain) = await tally.counts
            if onMain > 0 { return "\(onMain) of 200 actor turns ran on the main thread" }
            return value == 200 ? nil : "\(value) of 200 increments survived"
        }
    }

    // Embedded Swift 6.3.1's Concurrency library traps (an illegal instruction in
    // AsyncTask::flagAsAndEnqueueOnExecutor) when a task hops to a custom serial
    // executor, so an actor on a queue is checked in full Swift only.
    #if !hasFeature(Embedded)
    harness.run("an actor on a serial queue runs its turns on the queue, one at a time") {
        let queue = DispatchQueue(label: "checks.actor")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let counter = QueueCounter(queue: queue, key: key)
        return awaitCheck {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 { group.addTask { await counter.increment() } }
            }
            let (value, offQueue) = await counter.tally
            if offQueue > 0 { return "\(offQueue) of 200 actor turns ran off the queue" }
            return value == 200 ? nil : "\(value) of 200 increments survived"
        }
    }
    #endif

    harness.run("Runtime.sleep never ends early") {
        awaitCheck {
            let start = DispatchTime.now().uptimeNanoseconds
            await Runtime.sleep(nanoseconds: 20_000_000)
            let slept = DispatchTime.now().uptimeNanoseconds - start
            return slept >= 20_000_000 ? nil : "slept \(slept) ns of 20 ms"
        }
    }
}

func twice(_ value: Int) async -> Int { value * 2 }

/// A default actor: its turns are jobs on the pool.
actor Tally {
    var value = 0
    var onMain = 0
    func increment() {
        if Runtime.isMainThread { onMain += 1 }
        value += 1
    }
    var counts: (Int, Int) { (value, onMain) }
}

#if !hasFeature(Embedded)
/// An actor whose executor is a serial queue; it notes turns that ran elsewhere.
actor QueueCounter {
    let queue: DispatchQueue
    let key: DispatchSpecificKey<Int>
    var value = 0
    var offQueue = 0
    init(queue: DispatchQueue, key: DispatchSpecificKey<Int>) {
        self.queue = queue
        self.key = key
    }
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
    func increment() {
        if DispatchQueue.getSpecific(key: key) != 7 { offQueue += 1 }
        value += 1
    }
    var tally: (Int, Int) { (value, offQueue) }
}
#endif

/// Runs `body` in a task and waits (bounded) for its verdict.
func awaitCheck(_ body: @escaping @Sendable () async -> String?) -> String? {
    let done = DispatchSemaphore(value: 0)
    let box = VerdictBox()
    Task.detached {
        box.set(await body())
        done.signal()
    }
    if done.wait(timeout: timeout) != .success { return "timed out" }
    return box.value
}

/// A task's verdict, written once by the task before it signals and read by the
/// waiter after the signal (the semaphore orders the two).
// @unchecked Sendable: one write, then one read ordered after it by the semaphore.
final class VerdictBox: @unchecked Sendable {
    private(set) var value: String?
    func set(_ verdict: String?) { value = verdict }
}
#endif
