// Queues as executors: a serial queue as an actor's executor (isolation, assumeIsolated,
// order with the queue's items), shared serial targets as one exclusive context,
// concurrent queues refused as serial executors, and any queue as a task executor.

import Testing
@testable import Ringlet

/// An actor whose executor is a serial queue.
actor QueueActor {
    let queue: DispatchQueue
    var log: [Int] = []
    init(queue: DispatchQueue) { self.queue = queue }
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }

    func append(_ value: Int) -> Bool {
        log.append(value)
        return DispatchQueue.currentLabelForTests == queue.label
    }
}

extension DispatchQueue {
    /// The label of the queue whose work the calling thread runs.
    static var currentLabelForTests: String? { ThreadContext.current.currentQueue?.label }
}

@Suite struct ConcurrencyQueueExecutorTests {
    @Test func anActorOnASerialQueueRunsThereInOrderWithItsItems() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let queue = DispatchQueue(label: "test.actor-queue")
                let actor = QueueActor(queue: queue)
                let meter = OverlapMeter()
                for index in 0..<200 {
                    queue.async { meter.measure { _ = 0 } }
                    let onQueue = await actor.append(index)
                    if !onQueue { return "actor job \(index) did not run on the queue" }
                }
                if await actor.log != Array(0..<200) { return "actor jobs out of order" }
                // assumeIsolated inside plain queue work: the queue answers checkIsolated.
                let assumed = DispatchSemaphore(value: 0)
                queue.async {
                    let count = actor.assumeIsolated { $0.log.count }
                    if count == 200 { assumed.signal() }
                }
                if !waited(assumed) { return "assumeIsolated failed inside queue work" }
                return meter.maximum <= 1 ? nil : "queue items overlapped"
            }
        }
    }

    @Test func queuesSharingASerialTargetAreOneExclusiveContext() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let target = DispatchQueue(label: "test.shared-target")
                let a = DispatchQueue(label: "test.a", target: target)
                let b = DispatchQueue(label: "test.b", target: target)
                let alone = DispatchQueue(label: "test.alone")
                await Task.yield()
                if !a.isSameExclusiveExecutionContext(other: b) { return "a and b share a serial target" }
                if a.isSameExclusiveExecutionContext(other: alone) { return "a and alone share nothing" }
                // An actor on `a`, assumed isolated from work of `b`: same serial context.
                let actor = QueueActor(queue: a)
                let assumed = DispatchSemaphore(value: 0)
                b.async { actor.assumeIsolated { _ in _ = assumed.signal() } }
                return waited(assumed) ? nil : "assumeIsolated from a queue sharing the target failed"
            }
        }
    }

    /// The queue says the thread is not isolated (`isIsolatingCurrentContext`), and the
    /// Swift runtime stops the process with its own message.
    @Test func assumingIsolationOnAnotherQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            startRuntime(twoCoreConfiguration())
            ConcurrencyExecutors.installForTests()
            let actor = QueueActor(queue: DispatchQueue(label: "test.owner"))
            DispatchQueue(label: "test.stranger").sync { actor.preconditionIsolated() }
        }
        #expect(result?.standardErrorText.contains("Incorrect actor executor assumption") == true, "\(result?.standardErrorText ?? "")")
    }

    @Test func aConcurrentQueueIsNeverASerialExecutor() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            _ = DispatchQueue(label: "test.wide", attributes: .concurrent).asUnownedSerialExecutor()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("'test.wide'") && text.contains("concurrent"), "\(text)")
    }

    @Test func anyQueueIsATaskExecutor() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let serial = DispatchQueue(label: "test.preferred")
                let onSerial = await withTaskExecutorPreference(serial) {
                    async let child = DispatchQueue.currentLabelForTests
                    let mine = DispatchQueue.currentLabelForTests
                    return [mine, await child]
                }
                if onSerial != ["test.preferred", "test.preferred"] { return "preference ran on \(onSerial)" }
                let wide = DispatchQueue(label: "test.preferred-wide", attributes: .concurrent)
                let viaTask = await Task(executorPreference: wide) { DispatchQueue.currentLabelForTests }.value
                if viaTask != "test.preferred-wide" { return "Task(executorPreference:) ran on \(viaTask ?? "nil")" }
                // A concurrent queue runs the task's children in parallel.
                let gate = DispatchSemaphore(value: 0)
                let met = await withTaskExecutorPreference(wide) {
                    await withTaskGroup(of: Bool.self) { group in
                        group.addTask { gate.signal(); return true }
                        group.addTask { gate.wait(timeout: deadline()) == .success }
                        return await group.reduce(true) { $0 && $1 }
                    }
                }
                return met ? nil : "children on a concurrent preferred queue did not overlap"
            }
        }
    }
}
