import Ringlet

// Ringlet's behavioural checks as one program: run by `make embedded` (Embedded
// Swift, x86-64) and, on boards, by `make cross`/`make sim`. Every wait is bounded.

let harness = CheckHarness()

harness.run("serial queue runs items once each, in FIFO order") {
    let queue = DispatchQueue(label: "checks.fifo")
    let recorder = Recorder()
    let group = DispatchGroup()
    for i in 0..<2000 { queue.async(group: group) { recorder.append(i) } }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    let values = recorder.snapshot
    return values == Array(0..<2000) ? nil : "order broken (\(values.count) values)"
}

harness.run("serial queue never runs two items at once") {
    let queue = DispatchQueue(label: "checks.exclusive")
    let inFlight = SharedCounter(), maximum = SharedCounter()
    let group = DispatchGroup()
    for _ in 0..<500 {
        queue.async(group: group) {
            maximum.raiseMaximum(to: inFlight.increment())
            inFlight.decrement()
        }
    }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    return maximum.value == 1 ? nil : "\(maximum.value) items ran at once"
}

harness.run("concurrent queue runs items in parallel") {
    let queue = DispatchQueue(label: "checks.parallel", attributes: .concurrent)
    let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    let met = SharedCounter()
    // Each item waits for the other: both must run at the same time to finish.
    queue.async(group: group) { first.signal(); if second.wait(timeout: timeout) == .success { met.increment() } }
    queue.async(group: group) { second.signal(); if first.wait(timeout: timeout) == .success { met.increment() } }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    return met.value == 2 ? nil : "items did not overlap"
}

harness.run("barrier runs alone, after earlier items and before later ones") {
    let queue = DispatchQueue(label: "checks.barrier", attributes: .concurrent)
    let recorder = Recorder()
    let inFlight = SharedCounter()
    let group = DispatchGroup()
    for i in 0..<50 { queue.async(group: group) { inFlight.increment(); recorder.append(i); inFlight.decrement() } }
    queue.async(group: group, flags: .barrier) { recorder.append(inFlight.value == 0 ? 1000 : -1) }
    for i in 100..<150 { queue.async(group: group) { recorder.append(i) } }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    let values = recorder.snapshot
    guard let barrier = values.firstIndex(where: { $0 >= 1000 || $0 < 0 }) else { return "barrier never ran" }
    if values[barrier] < 0 { return "barrier overlapped another item" }
    let before = values[..<barrier], after = values[(barrier + 1)...]
    if values.count != 101 { return "\(values.count) values recorded, not 101: \(values)" }
    if let late = before.first(where: { $0 >= 100 }) { return "item \(late) ran before the barrier: \(values)" }
    if let early = after.first(where: { $0 < 100 }) { return "item \(early) ran after the barrier: \(values)" }
    return nil
}

harness.run("sync returns the closure's value and runs after pending items") {
    let queue = DispatchQueue(label: "checks.sync")
    let counter = SharedCounter()
    for _ in 0..<100 { queue.async { counter.increment() } }
    let seen = queue.sync { counter.value }
    return seen == 100 ? nil : "sync saw \(seen) of 100 earlier items"
}

harness.run("group notify runs once after every item") {
    let group = DispatchGroup()
    let counter = SharedCounter()
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<64 { DispatchQueue.global().async(group: group) { counter.increment() } }
    let seenAtNotify = SharedCounter()
    group.notify(queue: DispatchQueue.global()) { seenAtNotify.raiseMaximum(to: counter.value); done.signal() }
    if done.wait(timeout: timeout) != .success { return "notify never ran" }
    return seenAtNotify.value == 64 ? nil : "notify ran after \(seenAtNotify.value) of 64"
}

harness.run("semaphore counts and times out") {
    let semaphore = DispatchSemaphore(value: 2)
    if semaphore.wait(timeout: .now()) != .success || semaphore.wait(timeout: .now()) != .success {
        return "initial value not available"
    }
    if semaphore.wait(timeout: .now() + .milliseconds(20)) != .timedOut { return "third wait did not time out" }
    semaphore.signal(); semaphore.signal()
    return nil
}

harness.run("work item: wait, notify, cancel before run") {
    let counter = SharedCounter()
    let item = DispatchWorkItem { counter.increment() }
    let notified = DispatchSemaphore(value: 0)
    item.notify(queue: DispatchQueue.global()) { notified.signal() }
    DispatchQueue.global().async(execute: item)
    if item.wait(timeout: timeout) != .success { return "wait timed out" }
    if notified.wait(timeout: timeout) != .success { return "notify never ran" }
    let cancelled = DispatchWorkItem { counter.increment() }
    cancelled.cancel()
    DispatchQueue.global().async(execute: cancelled)
    if cancelled.wait(timeout: timeout) != .success { return "cancelled item never completed" }
    return counter.value == 1 ? nil : "cancelled item ran"
}

harness.run("suspend holds items until resume; inactive queue until activate") {
    let queue = DispatchQueue(label: "checks.suspend")
    let counter = SharedCounter()
    queue.suspend()
    let group = DispatchGroup()
    for _ in 0..<10 { queue.async(group: group) { counter.increment() } }
    if group.wait(timeout: .now() + .milliseconds(50)) != .timedOut || counter.value != 0 {
        return "suspended queue ran items"
    }
    queue.resume()
    if group.wait(timeout: timeout) != .success { return "resumed queue did not run" }
    let inactive = DispatchQueue(label: "checks.inactive", attributes: .initiallyInactive)
    inactive.async(group: group) { counter.increment() }
    if group.wait(timeout: .now() + .milliseconds(50)) != .timedOut { return "inactive queue ran an item" }
    inactive.activate()
    if group.wait(timeout: timeout) != .success { return "activated queue did not run" }
    return counter.value == 11 ? nil : "ran \(counter.value) of 11"
}

harness.run("queues targeting one serial queue never overlap") {
    let target = DispatchQueue(label: "checks.target")
    let inFlight = SharedCounter(), maximum = SharedCounter()
    let group = DispatchGroup()
    for n in 0..<4 {
        let queue = DispatchQueue(label: "checks.child\(n)", attributes: n % 2 == 0 ? [] : .concurrent,
                                  target: target)
        for _ in 0..<100 {
            queue.async(group: group) { maximum.raiseMaximum(to: inFlight.increment()); inFlight.decrement() }
        }
    }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    return maximum.value == 1 ? nil : "\(maximum.value) items overlapped"
}

harness.run("specifics are found through the target hierarchy") {
    let key = DispatchSpecificKey<Int>()
    let target = DispatchQueue(label: "checks.specific-target")
    target.setSpecific(key: key, value: 7)
    let child = DispatchQueue(label: "checks.specific-child", target: target)
    let seen = child.sync { DispatchQueue.getSpecific(key: key) }
    return seen == 7 ? nil : "getSpecific returned \(seen ?? -1)"
}

harness.run("concurrentPerform runs every index exactly once") {
    let counts = (0..<1000).map { _ in SharedCounter() }
    DispatchQueue.concurrentPerform(iterations: 1000) { counts[$0].increment() }
    return counts.allSatisfy({ $0.value == 1 }) ? nil : "an index ran zero or several times"
}

harness.run("the pool has exactly the threads it was configured with") {
    let group = DispatchGroup()
    for _ in 0..<64 { DispatchQueue.global().async(group: group) { } }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    let statistics = Runtime.statistics
    let expected = statistics.runtimeThreads + 1
    return statistics.processThreads == expected ? nil
        : "\(statistics.processThreads) threads, expected \(expected) (pool + manager + main)"
}

harness.run("asyncAfter runs items after their deadlines, never before") {
    let group = DispatchGroup()
    let early = SharedCounter()
    let start = DispatchTime.now()
    for delay in [30, 10, 20, 10, 0] {
        let deadline = start + .milliseconds(delay)
        group.enter()
        DispatchQueue.global().asyncAfter(deadline: deadline) {
            if DispatchTime.now() < deadline { early.increment() }
            group.leave()
        }
    }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    return early.value == 0 ? nil : "\(early.value) items ran before their deadline"
}


harness.run("an idle pool makes no wakeups") {
    let group = DispatchGroup()
    for _ in 0..<16 { DispatchQueue.global().async(group: group) { } }
    if group.wait(timeout: timeout) != .success { return "timed out" }
    // Let every worker finish parking: all listed as parked, the stall watch's last
    // look (the burst kept the workers busy) taken, and the switch count steady for
    // 50 ms (a thread is listed just before its futex sleep). Bounded.
    var before = Runtime.statistics
    var settled = false
    for _ in 0..<80 {
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(50))
        let now = Runtime.statistics
        if now.parkedThreads == now.workers + now.reserve && !now.stallWatchArmed
            && now.poolContextSwitches == before.poolContextSwitches {
            settled = true
            break
        }
        before = now
    }
    if !settled { return "the pool never settled (\(before.parkedThreads) parked, \(before.timersArmed) timers armed)" }
    _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(300))
    let after = Runtime.statistics
    if before.poolContextSwitches < 0 { return nil }  // no /proc: nothing to measure
    let woke = after.poolContextSwitches - before.poolContextSwitches
    return woke == 0 ? nil : "idle pool threads switched \(woke) times in 300 ms"
}

// After the idle check: a source's or channel's end leaves the manager a look it still
// owes (the half second a signal's handler outlives its last source, Reliability), which
// an idle check right after them would count as a wake-up.
runSourceChecks(harness)
runIOChecks(harness)
runBoardChecks(harness)
#if canImport(_Concurrency)
runAsyncChecks(harness)
runAsyncIOChecks(harness)
#endif

// The main queue: drained by the main thread inside dispatchMain(), which never
// returns; the last check ends the program from a main-queue item.
// `DispatchQueue.main` is bound to a local once: in Embedded mode, Swift 6.3's type
// checker crashes on `DispatchQueue.main.async { }` written inside a closure in
// top-level code (see README, "Embedded Swift").
let mainQueue = DispatchQueue.main
let mainQueueChecks = DispatchGroup()
let mainRecorder = Recorder()
mainQueueChecks.enter()
DispatchQueue.global().async {
    // Submitted from a worker: FIFO on the main thread, and sync from a worker runs there too.
    for i in 0..<100 { mainQueue.async { mainRecorder.append(i) } }
    let onMain: Bool = mainQueue.sync {
        dispatchPrecondition(condition: .onQueue(mainQueue))
        return true
    }
    mainRecorder.append(onMain ? 1000 : -1)
    mainQueueChecks.leave()
}
mainQueueChecks.notify(queue: mainQueue) {
    harness.run("dispatchMain drains the main queue in order; main.sync from a worker runs on it") {
        let values = mainRecorder.snapshot
        return values == Array(0..<100) + [1000] ? nil : "main queue saw \(values.count) values out of order"
    }
    print("\(harness.passed) passed, \(harness.failed) failed")
    Runtime.exit(status: harness.failed > 0 ? 1 : 0)
}
dispatchMain()
