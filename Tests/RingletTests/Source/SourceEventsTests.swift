// A dispatch source's events as an AsyncSequence (DispatchSource+Events.swift): what
// the handler would see, merged while the task is not waiting, ending once the source
// is cancelled; cancelling the task (or leaving the loop) cancels the source. Each
// scenario is a child process whose tasks run on Ringlet's pool (ConcurrencySupport.swift);
// each awaited element is bounded by `cancelLater`, which ends the iteration, and named
// for the watchdog.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct SourceEventsTests {
    /// k fires, then `cancel()` from the loop: the loop ends, after the cancel handler.
    @Test func aTimersEventsYieldFiresAndEndWhenTheSourceIsCancelled() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let queue = DispatchQueue(label: "test.events.timer")
                let timer = DispatchSource.makeTimerSource(queue: queue)
                let cancelHandlerRan = AtomicCounter()
                timer.setCancelHandler { cancelHandlerRan.increment() }
                timer.schedule(deadline: .now(), repeating: .milliseconds(2))
                cancelLater(timer)
                var elements = 0
                var fires: UInt = 0
                ConcurrencyChild.step("awaiting the timer's first element")
                for await count in timer.events {
                    if count < 1 { return "element \(elements) holds \(count) fires" }
                    elements += 1
                    fires += count
                    if elements == 5 { timer.cancel() }
                    ConcurrencyChild.step("awaiting the timer's element \(elements + 1)")
                }
                if elements != 5 { return "the loop ended after \(elements) elements, not 5" }
                if fires < 5 { return "5 elements held \(fires) fires" }
                if cancelHandlerRan.value != 1 { return "the loop ended before the cancel handler ran" }
                if !timer.isCancelled { return "the timer is not cancelled" }
                return timerIsDisarmed(timer) ? nil : "the cancelled timer is still armed"
            }
        }
    }

    /// Adds made before the task asks merge into one element holding their sum, however
    /// many: the iterator holds one element, not a queue of them.
    @Test func userDataAddsMergeIntoOneElementWhileTheTaskIsNotWaiting() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let queue = DispatchQueue(label: "test.events.add")
                let source = DispatchSource.makeUserDataAddSource(queue: queue)
                cancelLater(source)
                var iterator = source.events.makeAsyncIterator()  // takes the events over, activates
                source.add(data: 1)
                source.add(data: 2)
                source.add(data: 3)
                settle(queue)  // every delivery of those adds has run
                ConcurrencyChild.step("awaiting the element of 3 adds")
                let three = await iterator.next()
                if three != 6 { return "adds of 1, 2 and 3 came as \(String(describing: three)), not one element of 6" }
                for _ in 0..<10_000 { source.add(data: 2) }
                settle(queue)
                ConcurrencyChild.step("awaiting the element of 10,000 adds")
                let many = await iterator.next()
                if many != 20_000 { return "10,000 adds of 2 came as \(String(describing: many)), not one of 20,000" }
                source.add(data: 4)
                ConcurrencyChild.step("awaiting the element of one add")
                let one = await iterator.next()
                if one != 4 { return "an add of 4 came as \(String(describing: one))" }
                source.cancel()
                ConcurrencyChild.step("awaiting the end after cancel()")
                if await iterator.next() != nil { return "the events went on after cancel()" }
                return await iterator.next() == nil ? nil : "the events went on after their end"
            }
        }
    }

    /// The handler does not run while the events are iterated; replace keeps the latest.
    @Test func theIteratorTakesTheEventsOverFromTheHandler() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let queue = DispatchQueue(label: "test.events.replace")
                let source = DispatchSource.makeUserDataReplaceSource(queue: queue)
                let handlerRuns = AtomicCounter()
                source.setEventHandler { handlerRuns.increment() }
                cancelLater(source)
                var iterator = source.events.makeAsyncIterator()
                source.replace(data: 5)
                source.replace(data: 9)
                settle(queue)
                ConcurrencyChild.step("awaiting the element of two replaces")
                let latest = await iterator.next()
                if latest != 9 { return "replaces of 5 and 9 came as \(String(describing: latest)), not 9" }
                source.cancel()
                ConcurrencyChild.step("awaiting the end after cancel()")
                if await iterator.next() != nil { return "the events went on after cancel()" }
                return handlerRuns.value == 0 ? nil : "the event handler ran \(handlerRuns.value) time(s)"
            }
        }
    }

    /// Cancelling the task that waits for the next element cancels the source, and the
    /// loop ends (no element, no throw).
    @Test func cancellingTheIteratingTaskCancelsTheSource() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let source = DispatchSource.makeUserDataOrSource(queue: DispatchQueue(label: "test.events.task"))
                let cancelHandlerRan = AtomicCounter()
                source.setCancelHandler { cancelHandlerRan.increment() }
                nonisolated(unsafe) let watched = source
                let ended = AtomicCounter()
                let iterating = Task.detached { () -> Int in
                    defer { ended.increment() }
                    var elements = 0
                    for await _ in watched.events { elements += 1 }
                    return elements
                }
                let taken = source as! DispatchSource
                ConcurrencyChild.step("waiting for the task to take the events over")
                guard await eventuallyAsync({ taken.lock.withLock { taken.eventStream != nil } }) else {
                    source.cancel()
                    return "the task never made its iterator"
                }
                iterating.cancel()
                ConcurrencyChild.step("waiting for the loop of the cancelled task to end")
                guard await eventuallyAsync({ ended.value == 1 }) else {
                    source.cancel()  // ends the loop, and then the child
                    return "the loop went on after its task was cancelled"
                }
                let elements = await iterating.value
                if elements != 0 { return "the loop saw \(elements) element(s)" }
                if !source.isCancelled { return "cancelling the task did not cancel the source" }
                return cancelHandlerRan.value == 1 ? nil : "the cancel handler ran \(cancelHandlerRan.value) time(s)"
            }
        }
    }

    /// Leaving the loop drops the iterator, which cancels the source.
    @Test func leavingTheLoopCancelsTheSource() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.events.break"))
                let bound = cancelLater(source)
                source.add(data: 1)
                var first: UInt?
                ConcurrencyChild.step("awaiting the one element before the break")
                for await value in source.events {
                    first = value
                    break
                }
                if first != 1 { return "the loop's element was \(String(describing: first)), not 1" }
                ConcurrencyChild.step("waiting for the source to be cancelled")
                let cancelled = await eventuallyAsync { source.isCancelled }
                return cancelled && !bound.fired ? nil : "leaving the loop did not cancel the source"
            }
        }
    }

    /// A read source stays level-triggered: after an element, the next one comes only
    /// once the task asks again and the pipe is still (or again) readable.
    @Test func aReadSourcesEventsAreLevelTriggered() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let pipe = blockingPipe()
                defer { Glibc.close(pipe.write) }
                let queue = DispatchQueue(label: "test.events.read")
                let source = DispatchSource.makeReadSource(fileDescriptor: pipe.read, queue: queue)
                source.setCancelHandler { Glibc.close(pipe.read) }
                cancelLater(source)
                var iterator = source.events.makeAsyncIterator()
                writeAll(pipe.write, [1, 2, 3, 4, 5])
                ConcurrencyChild.step("awaiting the element of 5 bytes")
                let first = await iterator.next()
                if first != 5 { return "5 bytes came as \(String(describing: first))" }
                // Not read: still readable, so the next element comes at once.
                ConcurrencyChild.step("awaiting the element of the 5 bytes left unread")
                let again = await iterator.next()
                if again != 5 { return "5 bytes left unread came as \(String(describing: again))" }
                var buffer = [UInt8](repeating: 0, count: 8)
                let read = Glibc.read(pipe.read, &buffer, 8)
                if read != 5 { return "read(2) took \(read) bytes, not 5" }
                writeAll(pipe.write, [6, 7, 8])
                ConcurrencyChild.step("awaiting the element of 3 new bytes")
                let fresh = await iterator.next()
                if fresh != 3 { return "3 new bytes came as \(String(describing: fresh))" }
                source.cancel()
                ConcurrencyChild.step("awaiting the end after cancel()")
                return await iterator.next() == nil ? nil : "the events went on after cancel()"
            }
        }
    }

    /// A signal source's events count the signals (the signal is the process's); three
    /// that come before the task asks are one element of 3.
    @Test func aSignalSourcesEventsCountTheSignals() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let sigusr1: Int32 = 10
                _ = signal(sigusr1, SIG_IGN)
                let queue = DispatchQueue(label: "test.events.signal")
                let source = DispatchSource.makeSignalSource(signal: sigusr1, queue: queue)
                let registered = DispatchSemaphore(value: 0)
                source.setRegistrationHandler { registered.signal() }
                cancelLater(source)  // a lost signal cancels the source, which ends the loop
                var iterator = source.events.makeAsyncIterator()
                ConcurrencyChild.step("waiting for the signal source to register")
                guard waited(registered) else { return "the signal source never registered" }
                // One at a time: a signal sent while the same one is pending merges
                // with it in the kernel. Each merges into the element the task has not
                // asked for yet.
                guard let stream = (source as! DispatchSource).lock.withLock({ (source as! DispatchSource).eventStream })
                else { return "the iterator did not take the events over" }
                for round in 1...3 {
                    _ = rl_signal_send(sigusr1)
                    ConcurrencyChild.step("waiting for signal \(round) to merge into the pending element")
                    guard await eventuallyAsync({ stream.pendingElement == UInt(round) }) else {
                        return "after \(round) signals the pending element is \(String(describing: stream.pendingElement))"
                    }
                }
                ConcurrencyChild.step("awaiting the element of 3 signals")
                let merged = await iterator.next()
                if merged != 3 { return "the three signals came as \(String(describing: merged)), not one element of 3" }
                _ = rl_signal_send(sigusr1)
                ConcurrencyChild.step("awaiting the element of the fourth signal")
                let fourth = await iterator.next()
                if fourth != 1 { return "the fourth signal came as \(String(describing: fourth)), not one event" }
                source.cancel()
                ConcurrencyChild.step("awaiting the end after cancel()")
                return await iterator.next() == nil ? nil : "the events went on after cancel()"
            }
        }
    }
}

/// Bounds a scenario that awaits a source's events: after the patience the source is
/// cancelled, which ends the iteration (the scenario then fails on what it saw). The
/// answer says whether that cancel ran.
@discardableResult
func cancelLater(_ source: DispatchSourceProtocol) -> LateCancel {
    nonisolated(unsafe) let watched = source
    let late = LateCancel()
    DispatchQueue.global().asyncAfter(deadline: deadline()) {
        late.ran.increment()
        watched.cancel()
    }
    return late
}

/// Whether `cancelLater`'s cancel ran.
final class LateCancel: Sendable {
    let ran = AtomicCounter()
    var fired: Bool { ran.value > 0 }
}
