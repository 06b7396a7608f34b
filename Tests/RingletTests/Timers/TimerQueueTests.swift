import Testing
@testable import Ringlet

/// The manager's timer structure on virtual time: exact firing instants, never
/// early, coalescing, phase kept, missed intervals counted.
@Suite struct TimerQueueTests {
    private let ms: UInt64 = 1_000_000

    /// Drives a queue the way the manager does (ManagerThread+Timers.swift): wake at
    /// `nextAim()`, fire, repeat.
    private func run(_ queue: inout TimerQueue, until end: UInt64) -> [(at: UInt64, fired: [TimerQueue.Firing])] {
        var wakes: [(UInt64, [TimerQueue.Firing])] = []
        while let wake = queue.nextAim(), wake <= end {
            wakes.append((wake, queue.fire(at: wake)))
        }
        return wakes
    }

    @Test func anEmptyQueueNeverWakes() {
        var queue = TimerQueue()
        #expect(queue.nextAim() == nil)
        #expect(queue.fire(at: 1_000 * ms).isEmpty)
    }

    @Test func wakesNearTheEndOfTheEarliestWindowAndFiresEveryWindowContainingIt() {
        var queue = TimerQueue()
        let a = queue.schedule(deadline: 100 * ms, leeway: 50 * ms, interval: 0)  // [100, 150]
        let b = queue.schedule(deadline: 120 * ms, leeway: 100 * ms, interval: 0) // [120, 220]
        let c = queue.schedule(deadline: 160 * ms, leeway: 10 * ms, interval: 0)  // [160, 170]
        #expect(queue.nextAim() == 145 * ms)  // 150 less the margin: an eighth of 50, at most 5
        let first = queue.fire(at: 145 * ms)
        #expect(first.map(\.handle) == [a, b])
        #expect(queue.nextAim() == 168_750_000)  // 170 less an eighth of 10
        #expect(queue.fire(at: 168_750_000).map(\.handle) == [c])
        #expect(queue.nextAim() == nil)
    }

    @Test func neverFiresBeforeADeadline() {
        var queue = TimerQueue()
        _ = queue.schedule(deadline: 100 * ms, leeway: 0, interval: 0)
        _ = queue.schedule(deadline: 101 * ms, leeway: 1_000 * ms, interval: 0)
        let wakes = run(&queue, until: 10_000 * ms)
        for (at, fired) in wakes {
            for firing in fired { #expect(firing.deadline <= at) }
        }
        #expect(wakes.map(\.at) == [100 * ms, 1_096 * ms])
    }

    @Test func repeatingTimersKeepTheirPhase() {
        var queue = TimerQueue()
        _ = queue.schedule(deadline: 10 * ms, leeway: 3 * ms, interval: 10 * ms)
        let wakes = run(&queue, until: 55 * ms)
        // Each fire happens near the window's end (an eighth of the 3 ms leeway
        // before it); the next deadline stays on the 10 ms grid instead of drifting.
        #expect(wakes.map(\.at) == [12_625_000, 22_625_000, 32_625_000, 42_625_000, 52_625_000])
        #expect(wakes.flatMap(\.fired).map(\.deadline) == [10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms])
    }

    @Test func aLateWakeCountsTheMissedIntervals() {
        var queue = TimerQueue()
        let timer = queue.schedule(deadline: 10 * ms, leeway: 0, interval: 10 * ms)
        // The manager was held up until 47 ms: 10, 20, 30 and 40 have passed.
        let fired = queue.fire(at: 47 * ms)
        #expect(fired == [TimerQueue.Firing(handle: fired[0].handle, deadline: 10 * ms, count: 4)])
        #expect(fired[0].handle.slot == timer.slot)
        #expect(queue.nextAim() == 50 * ms)
    }

    /// A staged timer (a strict timer source) is due its advance before its deadline:
    /// the manager aims exactly there, the firing names the deadline still ahead, and
    /// the next deadline stays on the grid; a late wake still counts what it missed.
    @Test func aStagedTimerIsDueItsAdvanceBeforeItsDeadline() {
        var queue = TimerQueue()
        let advance: UInt64 = 300_000
        _ = queue.schedule(deadline: 10 * ms, leeway: 0, interval: 10 * ms, advance: advance)
        _ = queue.schedule(deadline: 100 * ms, leeway: 0, interval: 0)  // an ordinary one
        let wakes = run(&queue, until: 35 * ms)
        #expect(wakes.map(\.at) == [10 * ms - advance, 20 * ms - advance, 30 * ms - advance])
        #expect(wakes.flatMap(\.fired).map(\.deadline) == [10 * ms, 20 * ms, 30 * ms])
        #expect(wakes.flatMap(\.fired).map(\.count) == [1, 1, 1])
        // Held up until 47 ms: 40 has passed, 50 is due at 49.7.
        let late = queue.fire(at: 47 * ms)
        #expect(late.map(\.deadline) == [40 * ms] && late.map(\.count) == [1])
        #expect(queue.nextAim() == 50 * ms - advance)
        // Woken inside the advance of the next one: it fires, ahead of its deadline.
        let ahead = queue.fire(at: 59_800_000)
        #expect(ahead.map(\.deadline) == [50 * ms, 60 * ms] && ahead.map(\.count) == [1, 1])
        #expect(queue.nextAim() == 70 * ms - advance)
    }

    @Test func cancelledTimersNeverFireAndStaleHandlesAreIgnored() {
        var queue = TimerQueue()
        let a = queue.schedule(deadline: 10 * ms, leeway: 0, interval: 0)
        let b = queue.schedule(deadline: 20 * ms, leeway: 0, interval: 0)
        queue.cancel(a)
        queue.cancel(a)
        #expect(!queue.isLive(a))
        // The slot is reused; the old handle must not cancel the new timer.
        let c = queue.schedule(deadline: 30 * ms, leeway: 0, interval: 0)
        #expect(c.slot == a.slot && c != a)
        queue.cancel(a)
        #expect(queue.isLive(c))
        let wakes = run(&queue, until: 100 * ms)
        #expect(wakes.flatMap(\.fired).map(\.handle) == [b, c])
        #expect(queue.armedCount == 0)
    }

    @Test func twoThousandOneShotsAllFireOnce() {
        var queue = TimerQueue()
        var handles: [TimerQueue.Handle] = []
        for index in 0..<2_000 {
            handles.append(queue.schedule(deadline: UInt64(index % 97) * ms, leeway: UInt64(index % 7) * ms,
                                          interval: 0))
        }
        let fired = run(&queue, until: 1_000 * ms).flatMap(\.fired)
        #expect(fired.count == 2_000)
        #expect(Set(fired.map(\.handle.slot)) == Set(handles.map(\.slot)))
    }

    /// The benchmark's workload on virtual time: 200 timers every 50 ms with 25 ms
    /// leeway and scattered phases need two windows per period at least; waking a
    /// margin before each window's end (as the manager does) splits a few groups,
    /// so about 2.2 wake-ups per period (136 in 60 periods with the 3.1 ms margin, an
    /// eighth of the leeway; 125 when the margin was capped at 2 ms),
    /// where Dispatch's ignored leeway costs one per timer per period (200).
    @Test func coalescingTwoHundredTimers() {
        var queue = TimerQueue()
        for index in 0..<200 {
            let phase = UInt64(index * 7919 % 50) * ms
            _ = queue.schedule(deadline: 50 * ms + phase, leeway: 25 * ms, interval: 50 * ms)
        }
        let wakes = run(&queue, until: 3_050 * ms)
        let fires = wakes.reduce(0) { $0 + $1.fired.count }
        #expect(fires >= 200 * 59)
        #expect(wakes.count <= 61 * 23 / 10, "\(wakes.count) wake-ups for \(fires) fires")
        for (at, fired) in wakes {
            for firing in fired { #expect(firing.deadline <= at && at <= firing.deadline + 25 * ms) }
        }
    }

    @Test func theManagerAimsAnEighthOfTheLeewayBeforeTheWindowEnds() {
        let ms: UInt64 = 1_000_000
        var queue = TimerQueue()
        let wide = queue.schedule(deadline: 100 * ms, leeway: 100 * ms, interval: 0)   // [100, 200]
        #expect(queue.nextAim() == 195 * ms)   // an eighth is 12.5 ms: capped at 5 ms
        _ = queue.schedule(deadline: 150 * ms, leeway: 20 * ms, interval: 0)            // [150, 170]
        #expect(queue.nextAim() == 167_500_000)   // an eighth of 20 ms: 2.5
        queue.cancel(wide)
        _ = queue.schedule(deadline: 140 * ms, leeway: 0, interval: 0)                  // strict: [140, 140]
        #expect(queue.nextAim() == 140 * ms)   // never before a deadline
    }
}

@Suite struct TimerLeewayPolicyTests {
    private let ms: UInt64 = 1_000_000
    private let policy = TimerLeewayPolicy()

    @Test func defaultAndHigherKeepWhatTheyAsked() {
        for level in [QoSLevel.default, .userInitiated, .userInteractive, .unspecified] {
            #expect(policy.leeway(requested: 1 * ms, period: 1_000 * ms, level: level, strict: false) == 1 * ms)
        }
    }

    @Test func lowQoSIsWidenedToAFractionOfThePeriodCapped() {
        #expect(policy.leeway(requested: 0, period: 1_000 * ms, level: .background, strict: false) == 100 * ms)
        #expect(policy.leeway(requested: 0, period: 1_000 * ms, level: .utility, strict: false) == 50 * ms)
        #expect(policy.leeway(requested: 0, period: 60_000 * ms, level: .background, strict: false) == 1_000 * ms)
        #expect(policy.leeway(requested: 0, period: 60_000 * ms, level: .utility, strict: false) == 250 * ms)
        #expect(policy.leeway(requested: 500 * ms, period: 1_000 * ms, level: .background, strict: false) == 500 * ms)
    }

    @Test func strictTimersAreNeverWidened() {
        #expect(policy.leeway(requested: 0, period: 1_000 * ms, level: .background, strict: true) == 0)
    }

    @Test func theLeewayPolicyComesFromTheConfiguration() {
        let policy = RuntimeConfiguration(cores: 2, backgroundLeewayPercent: 50, backgroundLeewayMaxMilliseconds: 20,
                                          utilityLeewayPercent: 20, utilityLeewayMaxMilliseconds: 1000).leewayPolicy
        let second: UInt64 = 1_000_000_000
        #expect(policy.leeway(requested: 0, period: second, level: .utility, strict: false) == 200_000_000)
        #expect(policy.leeway(requested: 0, period: second, level: .background, strict: false) == 20_000_000)
        #expect(policy.leeway(requested: 0, period: second, level: .background, strict: true) == 0)
        #expect(policy.leeway(requested: 5, period: second, level: .userInitiated, strict: false) == 5)
    }
}

extension TimerQueue {
    /// One wake-up's fires as an array (the manager's `TimerTable.due` keeps the storage).
    mutating func fire(at now: UInt64) -> [Firing] {
        var fired: [Firing] = []
        fire(at: now, into: &fired)
        return fired
    }
}

/// The table that owns the windows and their owners, on virtual time: an owner goes
/// exactly when its timer does, and an old handle never touches a newer timer.
@Suite struct TimerTableTests {
    private let ms: UInt64 = 1_000_000

    private func action(_ counter: AtomicCounter) -> TimerTable.Owner {
        TimerTable.Owner(target: .action({ _ = counter.increment() }))
    }

    @Test func aOneShotsOwnerGoesWithItsFireAndItsHandleThenDisarmsNothing() {
        var table = TimerTable()
        let counter = AtomicCounter()
        let handle = table.arm(deadline: 10 * ms, leeway: 0, interval: 0, advance: 0, owner: action(counter))
        #expect(table.owner(slot: handle.slot) != nil)
        let fired = table.due(at: 10 * ms)
        #expect(fired.count == 1)
        let settled = table.settle(fired[0])
        if case .action(let run)? = settled?.target { run() }
        #expect(counter.value == 1 && settled?.current == nil)
        #expect(table.owner(slot: handle.slot) == nil && table.armedCount == 0)
        // The slot is reused by a newer timer: the old handle must not remove it.
        let newer = table.arm(deadline: 20 * ms, leeway: 0, interval: 0, advance: 0, owner: action(counter))
        #expect(newer.slot == handle.slot)
        let removedOld = table.disarm(handle)
        #expect(!removedOld)
        #expect(table.isArmed(newer) && table.owner(slot: newer.slot) != nil)
        let removedNewer = table.disarm(newer)
        #expect(removedNewer && table.owner(slot: newer.slot) == nil && table.armedCount == 0)
    }

    @Test func aRepeatingTimerKeepsItsOwnerUnderItsNewHandle() {
        var table = TimerTable()
        let counter = AtomicCounter()
        let handle = table.arm(deadline: 10 * ms, leeway: 0, interval: 10 * ms, advance: 0, owner: action(counter))
        let fired = table.due(at: 35 * ms)
        #expect(fired.map(\.count) == [3])
        _ = table.settle(fired[0])
        // An action's owner is spent by its fire; the repeating window stays armed.
        #expect(table.armedCount == 1 && !table.isArmed(handle))
        #expect(table.due(at: 39 * ms).isEmpty)
        #expect(table.due(at: 40 * ms).count == 1)
    }

    @Test func anOwnerClearedMeanwhileSettlesToNothing() {
        var table = TimerTable()
        let counter = AtomicCounter()
        let a = table.arm(deadline: 10 * ms, leeway: 0, interval: 0, advance: 0, owner: action(counter))
        let b = table.arm(deadline: 10 * ms, leeway: 0, interval: 0, advance: 0, owner: action(counter))
        let fired = table.due(at: 10 * ms)
        #expect(Set(fired.map(\.handle.slot)) == [a.slot, b.slot])
        // Running the first fire disarmed the second (an action may): it was due, so it
        // is out of the windows already, and its owner stays until settled.
        let removed = table.disarm(b)
        #expect(!removed)
        for firing in fired { _ = table.settle(firing) }
        #expect(table.owner(slot: a.slot) == nil && table.owner(slot: b.slot) == nil)
    }
}
