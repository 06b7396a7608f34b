// Suspending a queue stops it at its next item boundary — also when the items run
// nested inside the drain of a queue that targets it: a queue (or a source) that
// targets a suspended serial queue runs nothing more until that queue is resumed.

import Testing
@testable import Ringlet

@Suite struct NestedSuspensionTests {
    /// q2 targets serial q1; q2's first item suspends q1: its second item waits for
    /// q1's resume (GCD runs one item; a nested drain that checked only q2 ran two).
    @Test func suspendingTheTargetFromANestedItemStopsTheNestedQueue() {
        let q1 = DispatchQueue(label: "test.nested.q1")
        let q2 = DispatchQueue(label: "test.nested.q2", target: q1)
        let events = Recorder<String>()
        q1.suspend()
        q2.async { q1.suspend(); events.append("first") }
        q2.async { events.append("second") }
        q1.resume()
        #expect(eventually { events.values == ["first"] && !isRunning(q1) && !isRunning(q2) })
        // The drain has ended (neither queue runs anything): the window has passed.
        #expect(events.values == ["first"])
        events.append("resumed")
        q1.resume()
        #expect(eventually { events.count == 3 })
        #expect(events.values == ["first", "resumed", "second"])
    }

    /// A timer source on a serial queue whose handler suspends that queue: no second
    /// event runs while it is suspended, though the timer keeps firing (merged).
    @Test func aSourceHandlerSuspendingItsTargetStopsTheSource() {
        let target = DispatchQueue(label: "test.nested.timer-target")
        let timer = DispatchSource.makeTimerSource(queue: target)
        let handled = AtomicCounter()
        let source = timer as! DispatchSource
        timer.setEventHandler {
            guard handled.increment() == 1 else { return }
            target.suspend()
            // The next fire comes while this handler runs: its delivery is queued on
            // the source's queue, inside the target's drain.
            _ = eventually { source.pending.load(ordering: .acquiring) > 0 }
        }
        timer.schedule(deadline: .now(), repeating: .milliseconds(5), leeway: .nanoseconds(0))
        timer.activate()
        #expect(eventually { handled.value >= 1 && !isRunning(target) })
        // The drain has ended with a delivery queued: it did not run.
        #expect(handled.value == 1)
        target.resume()
        #expect(eventually { handled.value >= 2 })
        timer.cancel()
    }
}

/// Whether a drainer (or a sync caller) holds `queue` right now.
private func isRunning(_ queue: DispatchQueue) -> Bool { queue.lock.withLock { queue.state.running > 0 } }
