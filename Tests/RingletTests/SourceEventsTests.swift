// A dispatch source's events as an AsyncSequence (DispatchSource+Events.swift): what
// the handler would see, merged while the task is not waiting, ending once the source
// is cancelled; cancelling the task (or leaving the loop) cancels the source.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct SourceEventsTests {
    /// k fires, then `cancel()` from the loop: the loop ends, after the cancel handler.
    @Test func aTimersEventsYieldFiresAndEndWhenTheSourceIsCancelled() async {
        let queue = DispatchQueue(label: "test.events.timer")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let cancelHandlerRan = AtomicCounter()
        timer.setCancelHandler { cancelHandlerRan.increment() }
        timer.schedule(deadline: .now(), repeating: .milliseconds(2))
        cancelLater(timer)
        var elements = 0
        var fires: UInt = 0
        for await count in timer.events {
            #expect(count >= 1)
            elements += 1
            fires += count
            if elements == 5 { timer.cancel() }
        }
        #expect(elements == 5)
        #expect(fires >= 5)
        #expect(cancelHandlerRan.value == 1, "the loop ended before the cancel handler ran")
        #expect(timer.isCancelled)
        #expect(timerIsDisarmed(timer))
    }

    /// Adds made before the task asks merge into one element holding their sum, however
    /// many: the iterator holds one element, not a queue of them.
    @Test func userDataAddsMergeIntoOneElementWhileTheTaskIsNotWaiting() async {
        let queue = DispatchQueue(label: "test.events.add")
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        cancelLater(source)
        var iterator = source.events.makeAsyncIterator()  // takes the events over, activates
        source.add(data: 1)
        source.add(data: 2)
        source.add(data: 3)
        settle(queue)  // every delivery of those adds has run
        #expect(await iterator.next() == 6)
        for _ in 0..<10_000 { source.add(data: 2) }
        settle(queue)
        #expect(await iterator.next() == 20_000)
        source.add(data: 4)
        #expect(await iterator.next() == 4)
        source.cancel()
        #expect(await iterator.next() == nil)
        #expect(await iterator.next() == nil)
    }

    /// The handler does not run while the events are iterated; replace keeps the latest.
    @Test func theIteratorTakesTheEventsOverFromTheHandler() async {
        let queue = DispatchQueue(label: "test.events.replace")
        let source = DispatchSource.makeUserDataReplaceSource(queue: queue)
        let handlerRuns = AtomicCounter()
        source.setEventHandler { handlerRuns.increment() }
        cancelLater(source)
        var iterator = source.events.makeAsyncIterator()
        source.replace(data: 5)
        source.replace(data: 9)
        settle(queue)
        #expect(await iterator.next() == 9)
        source.cancel()
        #expect(await iterator.next() == nil)
        #expect(handlerRuns.value == 0)
    }

    /// Cancelling the task that waits for the next element cancels the source, and the
    /// loop ends (no element, no throw).
    @Test func cancellingTheIteratingTaskCancelsTheSource() async {
        let source = DispatchSource.makeUserDataOrSource(queue: DispatchQueue(label: "test.events.task"))
        let cancelHandlerRan = AtomicCounter()
        source.setCancelHandler { cancelHandlerRan.increment() }
        nonisolated(unsafe) let watched = source
        let ended = AtomicCounter()
        let iterating = Task { () -> Int in
            defer { ended.increment() }
            var elements = 0
            for await _ in watched.events { elements += 1 }
            return elements
        }
        let taken = source as! DispatchSource
        #expect(await eventuallyAsync { taken.lock.withLock { taken.eventStream != nil } })
        iterating.cancel()
        if !(await eventuallyAsync { ended.value == 1 }) {
            Issue.record("the loop went on after its task was cancelled; cancelling the source ends it")
            source.cancel()
        }
        #expect(await iterating.value == 0)
        #expect(source.isCancelled)
        #expect(cancelHandlerRan.value == 1)
    }

    /// Leaving the loop drops the iterator, which cancels the source.
    @Test func leavingTheLoopCancelsTheSource() async {
        let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.events.break"))
        source.add(data: 1)
        for await value in source.events {
            #expect(value == 1)
            break
        }
        #expect(await eventuallyAsync { source.isCancelled })
    }

    /// A read source stays level-triggered: after an element, the next one comes only
    /// once the task asks again and the pipe is still (or again) readable.
    @Test func aReadSourcesEventsAreLevelTriggered() async {
        let pipe = blockingPipe()
        defer { Glibc.close(pipe.write) }
        let queue = DispatchQueue(label: "test.events.read")
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.read, queue: queue)
        source.setCancelHandler { Glibc.close(pipe.read) }
        cancelLater(source)
        var iterator = source.events.makeAsyncIterator()
        writeAll(pipe.write, [1, 2, 3, 4, 5])
        #expect(await iterator.next() == 5)
        // Not read: still readable, so the next element comes at once.
        #expect(await iterator.next() == 5)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(Glibc.read(pipe.read, &buffer, 8) == 5)
        writeAll(pipe.write, [6, 7, 8])
        #expect(await iterator.next() == 3)
        source.cancel()
        #expect(await iterator.next() == nil)
    }

    /// A signal source's events count the signals (in a child: the signal is the
    /// process's); three that come before the task asks are one element of 3.
    @Test func aSignalSourcesEventsCountTheSignals() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let sigusr1: Int32 = 10
                _ = signal(sigusr1, SIG_IGN)
                let queue = DispatchQueue(label: "test.events.signal")
                let source = DispatchSource.makeSignalSource(signal: sigusr1, queue: queue)
                let registered = DispatchSemaphore(value: 0)
                source.setRegistrationHandler { registered.signal() }
                var iterator = source.events.makeAsyncIterator()
                guard waited(registered) else { return "the signal source never registered" }
                // One at a time: a signal sent while the same one is pending merges
                // with it in the kernel. Each merges into the element the task has not
                // asked for yet.
                guard let stream = (source as! DispatchSource).lock.withLock({ (source as! DispatchSource).eventStream })
                else { return "the iterator did not take the events over" }
                for round in 1...3 {
                    _ = rl_signal_send(sigusr1)
                    guard eventually({ stream.pendingElement == UInt(round) }) else {
                        return "after \(round) signals the pending element is \(String(describing: stream.pendingElement))"
                    }
                }
                // Bounded: a lost signal cancels the source, which ends the loop.
                nonisolated(unsafe) let watchdog = source
                DispatchQueue.global().asyncAfter(deadline: deadline()) { watchdog.cancel() }
                let merged = await iterator.next()
                if merged != 3 { return "the three signals came as \(String(describing: merged)), not one element of 3" }
                _ = rl_signal_send(sigusr1)
                if await iterator.next() != 1 { return "the fourth signal did not come as one event" }
                source.cancel()
                return await iterator.next() == nil ? nil : "the events went on after cancel()"
            }
        }
    }
}

/// Bounds a test that awaits a source's events: after the patience the source is
/// cancelled, which ends the iteration (the test then fails on what it saw).
func cancelLater(_ source: DispatchSourceProtocol) {
    nonisolated(unsafe) let watched = source
    DispatchQueue.global().asyncAfter(deadline: deadline()) { watched.cancel() }
}
