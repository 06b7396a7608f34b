/// The manager's timer structure: coalescing windows on a monotonic nanosecond
/// clock, with no clock of its own (callers pass `now`), so tests run on virtual time.
///
/// Every timer has a window [deadline, deadline + leeway]. The structure answers
/// one question — when must the manager next wake? — with an instant just before
/// the end of the earliest-ending window (`nextAim`), and then fires every timer
/// whose window contains the instant the manager woke (Architecture, "Energy-efficient
/// timers"). Timers never fire before their deadline, and a wake-up serves as many
/// timers as possible.
///
/// A staged timer (`advance` > 0: a `.strict` timer source with less leeway than the
/// advance) is due `advance` before its deadline instead: the manager hands its fire
/// to a worker early, and the worker sleeps out the rest itself, so the handler starts
/// one wake-up after the deadline instead of two (the manager's and the worker's;
/// DispatchSource+Timer.swift). `Firing.deadline` tells the manager it is ahead.
///
/// Two binary heaps index the timers, one by window end (when to wake) and one by
/// deadline (which windows contain the wake instant). Entries removed or rescheduled
/// stay in the heaps until they reach the top (lazy deletion, checked by generation),
/// so every operation is O(log n) and nothing allocates once the arrays have grown.
struct TimerQueue {
    /// A timer's identity: its slot and the generation that slot had when scheduled.
    struct Handle: Equatable {
        let slot: Int
        let generation: UInt32
    }

    /// One armed timer.
    struct Entry {
        var deadline: UInt64
        var leeway: UInt64
        /// 0: one-shot.
        var interval: UInt64
        /// How long before `deadline` the timer is due (0: at its deadline).
        var advance: UInt64 = 0
        var generation: UInt32
        var armed: Bool
    }

    /// What `fire(at:)` reports for each timer whose window contained the instant.
    struct Firing: Equatable {
        let handle: Handle
        /// The deadline that fired: after the instant of the fire for a staged timer.
        let deadline: UInt64
        /// Intervals that elapsed (1 for a one-shot; more when the manager woke late
        /// or a repeating timer's window was missed): what GCD adds to `data`.
        let count: UInt64
    }

    private var entries: [Entry] = []
    private var freeSlots: [Int] = []
    private var byEnd = MinHeap()
    private var byDeadline = MinHeap()
    private(set) var armedCount = 0

    /// Arms a timer; `leeway` is the (policy-adjusted) width of its window.
    mutating func schedule(deadline: UInt64, leeway: UInt64, interval: UInt64, advance: UInt64 = 0) -> Handle {
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            entries[slot].generation &+= 1
            entries[slot].deadline = deadline
            entries[slot].leeway = leeway
            entries[slot].interval = interval
            entries[slot].advance = advance
            entries[slot].armed = true
        } else {
            slot = entries.count
            entries.append(Entry(deadline: deadline, leeway: leeway, interval: interval, advance: advance,
                                 generation: 0, armed: true))
        }
        armedCount += 1
        index(slot)
        return Handle(slot: slot, generation: entries[slot].generation)
    }

    /// Disarms a timer; a stale handle (already cancelled or reused) is ignored.
    mutating func cancel(_ handle: Handle) {
        guard isLive(handle) else { return }
        entries[handle.slot].armed = false
        entries[handle.slot].generation &+= 1
        freeSlots.append(handle.slot)
        armedCount -= 1
    }

    /// The handle of the timer armed in `slot`, if any (a repeating timer's handle
    /// changes each time it fires).
    func currentHandle(slot: Int) -> Handle? {
        guard slot < entries.count, entries[slot].armed else { return nil }
        return Handle(slot: slot, generation: entries[slot].generation)
    }

    /// The next deadline of a live timer.
    func deadline(of handle: Handle) -> UInt64? {
        isLive(handle) ? entries[handle.slot].deadline : nil
    }

    /// Moves a live timer's next deadline (its interval and leeway stay); returns its
    /// new handle, or nil for a stale handle.
    mutating func move(_ handle: Handle, to deadline: UInt64) -> Handle? {
        guard isLive(handle) else { return nil }
        entries[handle.slot].deadline = deadline
        entries[handle.slot].generation &+= 1
        index(handle.slot)
        return Handle(slot: handle.slot, generation: entries[handle.slot].generation)
    }

    /// Every armed timer, soonest deadline first (for the live dump; allocates).
    func armedEntries() -> [(slot: Int, deadline: UInt64, leeway: UInt64, interval: UInt64)] {
        var armed: [(slot: Int, deadline: UInt64, leeway: UInt64, interval: UInt64)] = []
        for (slot, entry) in entries.enumerated() where entry.armed {
            armed.append((slot, entry.deadline, entry.leeway, entry.interval))
        }
        armed.sort { $0.deadline < $1.deadline }
        return armed
    }

    func isLive(_ handle: Handle) -> Bool {
        handle.slot < entries.count && entries[handle.slot].armed
            && entries[handle.slot].generation == handle.generation
    }

    /// The instant the manager must wake at (nil: no timer armed, and nothing wakes
    /// at all): an eighth of the earliest-ending window's leeway (at most
    /// `maximumMargin`) before that window's end — the latest instant that still
    /// serves that window, less a margin so that the manager's own wake-up and the
    /// hand-off to a worker still land inside it on a busy board. Still inside the
    /// window, so never early. The margin is what a wake-up cannot serve: timers whose
    /// deadlines fall in it wait for the next one, so it is kept small. 2 ms covers a
    /// wake-up and a hand-off on a Pi Zero, but not a few milliseconds of preemption
    /// (a loaded board, a virtual machine's host): with at most 2 ms, timers with a
    /// wide leeway saw fires end beyond their window, with at most 5 ms none did, for
    /// slightly more wake-ups per period (`make bench`).
    mutating func nextAim(maximumMargin: UInt64 = Self.maximumMargin) -> UInt64? {
        Self.dropStale(&byEnd, entries)
        guard let top = byEnd.top else { return nil }
        // A staged timer is aimed at exactly when it is due: its worker keeps the time.
        let margin = entries[top.slot].advance > 0 ? 0 : min(entries[top.slot].leeway / 8, maximumMargin)
        return top.key - min(margin, top.key)
    }

    static let maximumMargin: UInt64 = 5_000_000

    /// The earliest deadline armed (the first window to open), nil when none is.
    mutating func earliestDeadline() -> UInt64? {
        Self.dropStale(&byDeadline, entries)
        return byDeadline.top?.key
    }

    /// The instant `nextAim` gives a timer of this window when it is the earliest to
    /// end (a timer that is not staged).
    static func aim(deadline: UInt64, leeway: UInt64) -> UInt64 {
        let end = deadline &+ leeway < deadline ? UInt64.max : deadline &+ leeway
        return end - min(min(leeway / 8, maximumMargin), end)
    }

    /// Fires every timer whose window contains `now` (its deadline is at or before
    /// `now`, or a staged timer's deadline less its advance). One-shots are disarmed;
    /// repeating timers move to the first deadline after `now` (after the deadline
    /// that fired, for a staged one) on their original phase (no drift), counting the
    /// intervals passed.
    /// Appends the fires to `fired`, whose storage the caller keeps (`TimerTable.due`).
    mutating func fire(at now: UInt64, into fired: inout [Firing]) {
        while true {
            Self.dropStale(&byDeadline, entries)
            guard let top = byDeadline.top, top.key <= now else { break }
            _ = byDeadline.pop()
            let slot = top.slot
            let entry = entries[slot]
            let handle = Handle(slot: slot, generation: entry.generation)
            if entry.interval == 0 {
                fired.append(Firing(handle: handle, deadline: entry.deadline, count: 1))
                cancel(handle)
            } else {
                let missed = now > entry.deadline ? (now - entry.deadline) / entry.interval : 0
                fired.append(Firing(handle: handle, deadline: entry.deadline, count: missed + 1))
                entries[slot].deadline = entry.deadline &+ (missed + 1) &* entry.interval
                entries[slot].generation &+= 1
                index(slot)
            }
        }
    }

    private mutating func index(_ slot: Int) {
        let entry = entries[slot]
        if entry.advance > 0 {
            let due = entry.deadline - min(entry.advance, entry.deadline)
            byEnd.push(key: due, slot: slot, generation: entry.generation)
            byDeadline.push(key: due, slot: slot, generation: entry.generation)
            return
        }
        let end = entry.deadline &+ entry.leeway
        byEnd.push(key: end < entry.deadline ? UInt64.max : end, slot: slot, generation: entry.generation)
        byDeadline.push(key: entry.deadline, slot: slot, generation: entry.generation)
    }

    /// Pops the heap's entries for timers disarmed or re-armed since. Static, with the
    /// entries passed apart: as a method, its borrow of `self` shared the heap's storage
    /// with the `inout` heap, and each pop copied the whole heap.
    private static func dropStale(_ heap: inout MinHeap, _ entries: [Entry]) {
        while let top = heap.top {
            let entry = entries[top.slot]
            if entry.armed && entry.generation == top.generation { return }
            _ = heap.pop()
        }
    }
}
