// Descriptors watched by their band (Source/BandDescriptors.swift): a read source's
// event wakes one worker of the band whose workers run its handler, which runs it
// itself — the manager does not wake per event — and a band whose workers are all
// blocked still has its events taken (by the manager) and its handlers run. Counted
// with the runtime's statistics, never with sleeps alone.
import Glibc
import Synchronization
import Testing
@testable import Ringlet

@Suite struct BandDescriptorsTests {
    @Test func aPipeEventWakesTheBandsWorkerWhichRunsTheHandlerAndNotTheManager() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.oneWakeUpPerEvent() }
    }

    @Test func aHandlerBlockedInARingletWaitDoesNotStopItsBandsOtherDescriptors() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.blockedInRingletWait() }
    }

    @Test func aCancelledSourceGetsNoEventAndItsDescriptorIsWatchedAgainByTheNext() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.cancelledThenWatchedAgain() }
    }

    @Test func aTimerWhoseWindowOpenedFiresOnTheWakeUpOfItsBandsPipeEvent() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.timerLandsOnAPipeEvent() }
    }

    @Test func aWatcherSleepingInTheSetIsWokenForWork() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.watcherWokenForWork() }
    }

    @Test func aBlockedHandlersBandHandsTheSetToItsIdleWorker() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.idleWorkerTakesTheSet() }
    }

    @Test func aSourceWhoseDescriptorWasClosedAndReusedLeavesTheNewOwnersWatch() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.closedAndReused() }
    }

    @Test func aBandsDescriptorsBringTheManagersLookForwardPastAFarTimer() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.lookNotHeldByAFarTimer() }
    }

    @Test func aReadAndAWriteSourceOnOneSocketBothFire() async {
        await #expect(processExitsWith: .success) { BandDescriptorScenarios.readAndWriteOnOneSocket() }
    }
}

enum BandDescriptorScenarios {
    /// 20 bytes written one at a time, each after the handler read the one before, to a
    /// pipe whose read source is on a utility queue: 20 events taken by the band's
    /// worker, none by the manager, which wakes at most for its look at the bands.
    static func oneWakeUpPerEvent() {
        startRuntime(twoCoreConfiguration())
        guard poolParked() else { Issue.record("the pool never parked"); return }
        let pipe = TestPipe()
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd,
                                                   queue: DispatchQueue(label: "test.band-fd.pipe", qos: .utility))
        let registered = DispatchSemaphore(value: 0)
        let handled = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.setEventHandler {
            if pipe.read(4096) > 0 { handled.signal() }
        }
        source.activate()
        #expect(waited(registered))
        let before = Runtime.statistics
        let rounds = 20
        let scheduler = RuntimeParts.shared.scheduler.takeUnretainedValue()
        guard let watched = scheduler.keptDescriptors(forIndex: RunQueueIndex.of(QoSPriority(.utility))) else {
            Issue.record("no band watches utility descriptors")
            return
        }
        for round in 1...rounds {
            // Written while the band's watcher sleeps in its set (a byte written while
            // the handler before still ran is read by its re-run, level-triggered, and
            // epoll then drops the event: the descriptor is no longer ready).
            #expect(eventually { watched.watcherWaiting.load(ordering: .relaxed) })
            pipe.write(1)
            #expect(waited(handled))
            #expect(eventually {
                Runtime.statistics.descriptorEventsTakenByBands - before.descriptorEventsTakenByBands >= round
            })
        }
        let after = Runtime.statistics
        let byBands = after.descriptorEventsTakenByBands - before.descriptorEventsTakenByBands
        let byManager = after.descriptorEventsTakenByManager - before.descriptorEventsTakenByManager
        #expect(byBands >= rounds, "the band's workers took \(byBands) of \(rounds) events")
        #expect(byManager == 0, "the manager took \(byManager) events")
        let managerWakes = after.managerWakeups - before.managerWakeups
        #expect(managerWakes <= 4, "the manager woke \(managerWakes) times for \(rounds) pipe events")
        source.cancel()
    }

    /// The one utility worker of a two-core pool blocks in a semaphore wait in one
    /// source's handler; a second utility source's bytes still reach their handler (the
    /// manager takes the event, a reserve worker runs it), which releases the first.
    static func blockedInRingletWait() {
        startRuntime(twoCoreConfiguration())
        let pair = BlockedPair(qos: .utility, label: "test.band-fd.utility")
        #expect(waited(pair.registered))
        pair.blocker.write(1)
        #expect(waited(pair.blocked))
        let scheduler = RuntimeParts.shared.scheduler.takeUnretainedValue()
        // The band asked the manager to watch it when its worker blocked (no timer of
        // the band is armed: its descriptors alone made it ask).
        #expect(eventually { scheduler.bandWatchRequests.load(ordering: .relaxed) >= 1 })
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let polls = manager.bandDescriptorPollsCompleted.load(ordering: .relaxed)
        let before = Runtime.statistics
        pair.other.write(1)
        #expect(waited(pair.done, seconds: 15), "the second source's handler never released the first")
        let byManager = Runtime.statistics.descriptorEventsTakenByManager - before.descriptorEventsTakenByManager
        #expect(byManager >= 1, "the manager took \(byManager) events of the blocked band's set")
        // Through its poll of the set, not at its once-a-second look.
        #expect(manager.bandDescriptorPollsCompleted.load(ordering: .relaxed) > polls)
        pair.cancel()
    }

    /// A cancelled source's descriptor leaves the band's set: a byte written after its
    /// cancel handler ran reaches only the next source made on the same descriptor,
    /// which the band's set watches again.
    static func cancelledThenWatchedAgain() {
        startRuntime(twoCoreConfiguration())
        let pipe = TestPipe()
        let queue = DispatchQueue(label: "test.band-fd.again", qos: .utility)
        let stale = AtomicCounter()
        let cancelled = DispatchSemaphore(value: 0)
        let registered = DispatchSemaphore(value: 0)
        let old = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        old.setRegistrationHandler { registered.signal() }
        old.setEventHandler { stale.increment() }
        old.setCancelHandler { cancelled.signal() }
        old.activate()
        #expect(waited(registered))
        old.cancel()
        #expect(waited(cancelled))
        let before = Runtime.statistics.descriptorEventsTakenByBands
        pipe.write(3)
        let received = AtomicCounter()
        let fresh = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        fresh.setEventHandler { received.increment(by: max(pipe.read(4096), 0)) }
        fresh.activate()
        #expect(eventually { received.value == 3 })
        // The fresh source's handler ran on the same serial queue after the byte came:
        // any delivery of the old source would have been queued before it.
        settle(queue)
        #expect(stale.value == 0, "the cancelled source's handler ran \(stale.value) times")
        // The fresh source is in the band's set again: the old one's entry left it (else
        // the set refuses the descriptor, EEXIST, and the ring polls it).
        #expect(Runtime.statistics.descriptorEventsTakenByBands > before)
        fresh.cancel()
    }

    /// A utility timer with three seconds of leeway (its band's watcher would wake near
    /// the end of that window) and a utility pipe: a byte written once the window has
    /// opened wakes the band's worker, which fires the timer then, inside its window —
    /// never before its deadline, and long before the end the watcher aims at.
    static func timerLandsOnAPipeEvent() {
        startRuntime(twoCoreConfiguration())
        let queue = DispatchQueue(label: "test.band-fd.lands", qos: .utility)
        let pipe = TestPipe()
        let reader = drainingReader(pipe, on: queue)
        let fired = DispatchSemaphore(value: 0)
        let firedAt = Atomic<UInt64>(0)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let deadline = DispatchTime.now() + .milliseconds(30)
        timer.schedule(deadline: deadline, repeating: .never, leeway: .seconds(3))
        timer.setEventHandler {
            firedAt.store(MonotonicClock.nanoseconds, ordering: .relaxed)
            fired.signal()
        }
        timer.activate()
        // The window opens; the watcher sleeps on towards its end.
        while MonotonicClock.nanoseconds < deadline.uptimeNanoseconds + 20_000_000 { sleepMilliseconds(5) }
        pipe.write(1)
        #expect(waited(fired, seconds: 10))
        let late = firedAt.load(ordering: .relaxed) &- deadline.uptimeNanoseconds
        #expect(firedAt.load(ordering: .relaxed) >= deadline.uptimeNanoseconds, "the timer fired before its deadline")
        #expect(late < 1_500_000_000, "the timer fired \(late / 1_000_000) ms into its window, not on the pipe's wake-up")
        timer.cancel()
        reader.cancel()
    }

    /// The one utility worker of a two-core pool sleeps in its band's set (a read source
    /// of the band is registered, nothing else is due): utility work pushed then wakes it
    /// through the set's eventfd — no reserve may run it, no other thread would.
    static func watcherWokenForWork() {
        startRuntime(twoCoreConfiguration())
        let pipe = TestPipe()
        let reader = drainingReader(pipe, on: DispatchQueue(label: "test.band-fd.sleeper", qos: .utility))
        let scheduler = RuntimeParts.shared.scheduler.takeUnretainedValue()
        guard let watched = scheduler.keptDescriptors(forIndex: RunQueueIndex.of(QoSPriority(.utility))) else {
            Issue.record("no band watches utility descriptors")
            return
        }
        for round in 0..<10 {
            #expect(eventually { watched.watcherWaiting.load(ordering: .relaxed) }, "round \(round)")
            let ran = DispatchSemaphore(value: 0)
            DispatchQueue.global(qos: .utility).async { ran.signal() }
            #expect(waited(ran), "utility work pushed while the band's worker slept in its set never ran")
        }
        reader.cancel()
    }

    /// Two default-QoS read sources on the high band's two workers: the worker that took
    /// the first's event blocks in its handler; the other, parked, becomes the band's
    /// watcher at that block and takes the second source's event — the manager does not
    /// (it would only at its once-a-second look).
    static func idleWorkerTakesTheSet() {
        startRuntime(twoCoreConfiguration())
        guard poolParked() else { Issue.record("the pool never parked"); return }
        let pair = BlockedPair(qos: .default, label: "test.band-fd.high")
        #expect(waited(pair.registered))
        // Both high-band workers parked: the one that takes the first event leaves the
        // other idle (a worker still busy then would make the manager watch the band).
        guard poolParked() else { Issue.record("the pool never parked"); return }
        pair.blocker.write(1)
        #expect(waited(pair.blocked))
        let before = Runtime.statistics
        pair.other.write(1)
        #expect(waited(pair.done, seconds: 15), "the second source's handler never released the first")
        let after = Runtime.statistics
        let byManager = after.descriptorEventsTakenByManager - before.descriptorEventsTakenByManager
        #expect(byManager == 0, "the manager took \(byManager) events while a worker of the band was idle")
        #expect(after.descriptorEventsTakenByBands > before.descriptorEventsTakenByBands)
        pair.cancel()
    }

    /// A source's descriptor closed under it (misuse: the runtime warns and cancels it)
    /// and the number reused for another pipe that a second source watches: the first
    /// source's removal must not take the second's registration out of the band's set.
    static func closedAndReused() {
        startRuntime(twoCoreConfiguration())
        let queue = DispatchQueue(label: "test.band-fd.reused", qos: .utility)
        let old = TestPipe()
        let number = old.readEnd
        let first = DispatchSource.makeReadSource(fileDescriptor: number, queue: queue)
        let registered = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
        first.setRegistrationHandler { registered.signal() }
        first.setEventHandler { _ = old.read(4096) }
        first.setCancelHandler { cancelled.signal() }
        first.activate()
        #expect(waited(registered))
        // The number now names a new pipe's read end.
        let fresh = TestPipe()
        #expect(dup2(fresh.readEnd, number) == number)
        close(fresh.readEnd)
        let received = AtomicCounter()
        let second = DispatchSource.makeReadSource(fileDescriptor: number, queue: queue)
        let secondRegistered = DispatchSemaphore(value: 0)
        second.setRegistrationHandler { secondRegistered.signal() }
        second.setEventHandler {
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = read(number, &bytes, 64)
            if count > 0 { received.increment(by: count) }
        }
        second.activate()
        #expect(waited(secondRegistered))
        first.cancel()
        #expect(waited(cancelled))
        var byte: UInt8 = 5
        #expect(write(fresh.writeEnd, &byte, 1) == 1)
        #expect(eventually { received.value == 1 }, "the second source never heard its pipe")
        second.cancel()
    }

    /// The manager's one look at all bands is held until it passes, a second after the
    /// earliest band's window: a high-band timer ten minutes away sets it ten minutes
    /// out. A utility read source registered then needs a look within about a second, and
    /// brings it forward.
    static func lookNotHeldByAFarTimer() {
        startRuntime(twoCoreConfiguration())
        let far = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "test.band-fd.far"))
        far.schedule(deadline: .now() + .seconds(600), leeway: .milliseconds(10))
        far.setEventHandler {}
        let armed = DispatchSemaphore(value: 0)
        far.setRegistrationHandler { armed.signal() }
        far.activate()
        #expect(waited(armed))
        let lookIn: @Sendable () -> UInt64? = {
            let manager = RuntimeParts.shared.manager.takeUnretainedValue()
            return manager.bandDeadline().map { $0 &- MonotonicClock.nanoseconds }
        }
        let before = onManager(lookIn) ?? nil
        #expect((before ?? 0) > 500_000_000_000, "the look before the read source: \(String(describing: before)) ns away")
        let pipe = TestPipe()
        let reader = drainingReader(pipe, on: DispatchQueue(label: "test.band-fd.near", qos: .utility))
        let after = onManager(lookIn) ?? nil
        #expect((after ?? .max) <= 1_100_000_000, "the look after the read source: \(String(describing: after)) ns away")
        reader.cancel()
        far.cancel()
    }

    /// A socket watched for reading and for writing by two sources of one band: the
    /// band's set holds a descriptor once (EEXIST), so the second source is polled on
    /// the ring, and both fire.
    static func readAndWriteOnOneSocket() {
        startRuntime(twoCoreConfiguration())
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            Issue.record("socketpair failed: errno \(errno)")
            return
        }
        let queue = DispatchQueue(label: "test.band-fd.socket", qos: .utility)
        let readable = DispatchSemaphore(value: 0), writable = DispatchSemaphore(value: 0)
        let reader = DispatchSource.makeReadSource(fileDescriptor: pair[0], queue: queue)
        reader.setEventHandler {
            var byte: UInt8 = 0
            if read(pair[0], &byte, 1) == 1 { readable.signal() }
        }
        let writer = DispatchSource.makeWriteSource(fileDescriptor: pair[0], queue: queue)
        writer.setEventHandler {
            writable.signal()
            writer.suspend()  // level-triggered: it would fire while there is room
        }
        reader.activate()
        writer.activate()
        #expect(waited(writable))
        var byte: UInt8 = 1
        #expect(write(pair[1], &byte, 1) == 1)
        #expect(waited(readable))
        reader.cancel()
        writer.resume()
        writer.cancel()
    }
}

/// A read source on `pipe` whose handler drains it, activated, once its registration
/// handler ran (the descriptor is then in its band's set).
private func drainingReader(_ pipe: TestPipe, on queue: DispatchQueue) -> DispatchSourceRead {
    let reader = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
    let registered = DispatchSemaphore(value: 0)
    reader.setRegistrationHandler { registered.signal() }
    reader.setEventHandler { _ = pipe.read(4096) }
    reader.activate()
    #expect(waited(registered), "the read source on fd \(pipe.readEnd) was never registered")
    return reader
}

/// Two read sources of one QoS on two pipes: the first's handler blocks in a semaphore
/// wait until the second's handler, run on a byte of its pipe, releases it.
private struct BlockedPair {
    let blocker = TestPipe(), other = TestPipe()
    let released = DispatchSemaphore(value: 0), blocked = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let registered = DispatchGroup()
    let first: DispatchSourceRead, second: DispatchSourceRead

    init(qos: DispatchQoS, label: String) {
        let (blocker, other) = (self.blocker, self.other)
        let (released, blocked, done) = (self.released, self.blocked, self.done)
        first = DispatchSource.makeReadSource(fileDescriptor: blocker.readEnd,
                                              queue: DispatchQueue(label: label + ".blocker", qos: qos))
        first.setEventHandler {
            _ = blocker.read(4096)
            blocked.signal()
            _ = released.wait(timeout: .now() + .seconds(20))
            done.signal()
        }
        second = DispatchSource.makeReadSource(fileDescriptor: other.readEnd,
                                               queue: DispatchQueue(label: label + ".other", qos: qos))
        second.setEventHandler {
            if other.read(4096) > 0 { released.signal() }
        }
        for source in [first, second] {
            registered.enter()
            source.setRegistrationHandler { [registered] in registered.leave() }
            source.activate()
        }
    }

    func cancel() {
        first.cancel()
        second.cancel()
    }
}
