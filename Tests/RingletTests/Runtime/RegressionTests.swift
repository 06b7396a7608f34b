// Regression tests: each reproduces a bug found in code review (all fixed). Every
// wait is bounded.

import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite(.serialized) struct RegressionTests {
    // MARK: sync

    /// GCD runs a `sync` block on the calling thread, which keeps holding the queue it
    /// came from. Ringlet's contended path runs it on the drainer's thread instead.
    @Test func contendedSyncRunsOnTheCallingThread() {
        let outer = DispatchQueue(label: "review.sync.outer")
        let inner = DispatchQueue(label: "review.sync.inner")
        let gate = Gate()
        let innerBusy = DispatchSemaphore(value: 0)
        inner.async {
            innerBusy.signal()
            gate.pass(within: 5)
        }
        #expect(waited(innerBusy))
        let sameThread = Recorder<Bool>()
        let outerHeld = Recorder<Bool>()
        let done = DispatchSemaphore(value: 0)
        outer.async {
            let caller = ThreadControl.threadID
            inner.sync {
                sameThread.append(ThreadControl.threadID == caller)
                // What dispatchPrecondition(condition: .onQueue(outer)) checks.
                outerHeld.append(DispatchPredicate.onQueue(outer).holds(in: ThreadContext.current))
            }
            done.signal()
        }
        // The sync is queued behind the gated item (the slow path).
        #expect(eventually { inner.pendingCount == 1 })
        gate.open()
        #expect(waited(done))
        #expect(sameThread.values == [true], "the sync block ran on another thread")
        #expect(outerHeld.values == [true], "dispatchPrecondition(.onQueue(outer)) would trap inside outer's sync")
    }

    // MARK: global queue identity

    /// An item submitted to the default global queue from a thread with another QoS
    /// runs "on" the global queue of that QoS: `.onQueue(.global())` fails inside it.
    @Test func itemOfTheDefaultGlobalQueueRunsOnIt() {
        let held = Recorder<(Bool, Bool)>()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global(qos: .utility).async {
            DispatchQueue.global().async {
                let context = ThreadContext.current
                held.append((DispatchPredicate.onQueue(.global()).holds(in: context),
                             DispatchPredicate.notOnQueue(.global(qos: .utility)).holds(in: context)))
                done.signal()
            }
        }
        #expect(waited(done))
        #expect(held.values.first?.0 == true, "dispatchPrecondition(.onQueue(.global())) would trap")
        #expect(held.values.first?.1 == true, "the item claims to run on the utility global queue")
    }

    // MARK: group

    /// GCD releases a `wait()` that began before the count reached zero, even when the
    /// group is entered again right away (dispatch_group_wait compares generations).
    @Test func groupWaitIsReleasedByEveryReturnToZero() {
        // Keep every core but the test thread's busy, and wait on a background-band
        // (SCHED_IDLE) worker: once woken, the waiter runs only after the test thread
        // has entered the group again, as on any loaded board.
        let spinners = max(ThreadControl.onlineCPUs - 1, 0)
        let stop = Gate()
        defer { stop.open() }
        for _ in 0..<spinners {
            DispatchQueue.global(qos: .userInitiated).async { while !stop.isOpen {} }
        }
        var missed = 0
        for _ in 0..<5 {
            let group = DispatchGroup()
            group.enter()
            let result = Recorder<DispatchTimeoutResult>()
            let waiting = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            DispatchQueue.global(qos: .background).async {
                waiting.signal()
                result.append(group.wait(timeout: .now() + 0.3))
                finished.signal()
            }
            #expect(waited(waiting))
            // The waiter is inside wait() (the scheduler counts it blocked on this group).
            #expect(eventually { Runtime.shared.scheduler.blockedThreads { reason in
                if case .group(let waitedOn) = reason { return waitedOn === group }
                return false
            } == 1 })
            group.leave()  // the count returns to zero: every waiter is released (GCD)
            group.enter()
            #expect(waited(finished))
            if result.values != [.success] { missed += 1 }
            group.leave()
        }
        #expect(missed == 0, "\(missed) of 5 waiters missed the return to zero")
    }

    // MARK: notify QoS

    /// GCD captures the QoS of the thread that calls `notify`; Ringlet uses the QoS of
    /// whichever thread makes the count reach zero.
    @Test func groupNotifyRunsAtTheQoSOfItsCaller() {
        let group = DispatchGroup()
        group.enter()
        let levels = Recorder<QoSLevel>()
        let registered = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global(qos: .userInitiated).async {
            group.notify(queue: .global()) {
                levels.append(currentLevel)
                done.signal()
            }
            registered.signal()
        }
        #expect(waited(registered))
        DispatchQueue.global(qos: .background).async { group.leave() }
        #expect(waited(done))
        #expect(levels.values == [.userInitiated], "notify block ran at \(levels.values)")
    }

    @Test func workItemNotifyRunsAtTheQoSOfItsCaller() {
        let item = DispatchWorkItem {}
        let levels = Recorder<QoSLevel>()
        let registered = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global(qos: .userInitiated).async {
            item.notify(queue: .global()) {
                levels.append(currentLevel)
                done.signal()
            }
            registered.signal()
        }
        #expect(waited(registered))
        DispatchQueue.global(qos: .background).async(execute: item)
        #expect(waited(done))
        #expect(levels.values == [.userInitiated], "notify block ran at \(levels.values)")
    }

    // MARK: deadlock report

    /// A pool thread whose *timed* wait expires while every pool thread is blocked runs
    /// the deadlock check at once, long before `deadlockGraceMilliseconds`, and the
    /// report kills a process whose waits would all have returned.
    @Test func timedWaitsAreNotReportedAsDeadlock() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            RegressionScenarios.timedWaitsAreNotADeadlock()
        }
        let text = result?.standardErrorText ?? ""
        #expect(!text.contains("deadlock"), "timed waits reported as a deadlock: \(text)")
    }

    // MARK: inversion through DispatchWorkItem.wait

    /// The waited-for item is in the batch the (background) drainer detached: the raise
    /// only sets the override signal, the drainer yields, and the queue is woken again
    /// at background priority. The raise is lost.
    @Test func workItemWaitRaisesAQueueBeingDrained() async {
        await #expect(processExitsWith: .success) { RegressionScenarios.workItemWaitWhileDraining() }
    }

    /// The waited-for item is on a global queue: `raise` ignores root queues.
    @Test func workItemWaitRaisesAnItemOnAGlobalQueue() async {
        await #expect(processExitsWith: .success) { RegressionScenarios.workItemWaitOnGlobalQueue() }
    }
    /// The raise of a serial queue ends once the raising item has run — unless the
    /// drainer yielded before reaching it: the detached marker is dropped and never put
    /// back, so everything after the raising item also runs on the high band.
    @Test func raiseEndsAtTheRaisingItemAfterAYield() async {
        await #expect(processExitsWith: .success) { RegressionScenarios.raiseOutlivesAYield() }
    }

    // MARK: node pool

    /// The "pool is full" warning is claimed by the first wait ever, even when that
    /// wait ends before the 1 s delay: a later exhaustion that lasts is then silent.
    @Test func laterLongPoolExhaustionIsReported() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            RegressionScenarios.twoPoolExhaustions()
        }
        #expect(result?.standardErrorText.contains("work-node pool is full") == true,
                "no warning for a 1.5 s exhaustion: \(result?.standardErrorText ?? "")")
    }

    // MARK: main-thread binding

    /// A queue that targets the main queue runs its items on the main thread; `sync`
    /// onto it from a worker takes the fast path and runs the block on the worker.
    @Test func syncOntoAQueueTargetingMainRunsOnTheMainThread() async {
        await #expect(processExitsWith: .success) { RegressionScenarios.syncOntoQueueTargetingMain() }
    }

    // MARK: Runtime.start

    /// `Runtime.start(configuration:)` is documented to throw `.threadCreationFailed`;
    /// it traps instead (the failure is only recorded inside `Runtime.shared`'s
    /// initialiser, which then calls `ringletMisuse`). And the error blamed
    /// RLIMIT_NPROC when RLIMIT_AS had refused the stacks.
    @Test func startThrowsWhenAThreadIsRefused() async {
        // The child traps with "Ringlet: the runtime could not start: could not create
        // pool thread N of 128: EAGAIN ..." instead of returning the error.
        await #expect(processExitsWith: .success) { RegressionScenarios.startWithRefusedThread() }
    }
}

enum RegressionScenarios {
    static func twoPoolExhaustions() {
        startRuntime(RuntimeConfiguration(cores: 2, workNodes: 64))
        let queue = DispatchQueue(label: "review.pool")
        let ran = AtomicCounter()
        for pause in [100, 1500] {
            queue.suspend()
            // Resumes the queue after `pause` ms, while this thread waits for nodes.
            DispatchQueue.global().async {
                sleepMilliseconds(pause)
                queue.resume()
            }
            for _ in 0..<200 { queue.async { ran.increment() } }
            let drained = DispatchSemaphore(value: 0)
            queue.async { drained.signal() }
            #expect(waited(drained))
        }
        #expect(Runtime.statistics.workNodeExhaustionWaits >= 2)
    }

    static func raiseOutlivesAYield() {
        startRuntime(RuntimeConfiguration(cores: 2))
        guard let utilityGate = holdBand(.utility), let backgroundGate = holdBand(.background),
              let highGate = holdBand(.default) else { Issue.record("could not hold the bands"); return }
        defer { utilityGate.open(); backgroundGate.open(); highGate.open() }
        let queue = DispatchQueue(label: "review.raise.yield")
        let ran = Recorder<String>()
        let raisingRan = DispatchSemaphore(value: 0)
        queue.suspend()
        queue.async(qos: .background) {
            ran.append("before0")
            // More urgent work in the root run queue: the drainer yields after this item.
            DispatchQueue.global(qos: .userInteractive).async { ran.append("urgent") }
        }
        queue.async(qos: .background) { ran.append("before1") }
        queue.async(qos: .userInitiated) {
            ran.append("raising")
            raisingRan.signal()
        }
        for index in 0..<3 { queue.async(qos: .background) { ran.append("after\(index)") } }
        queue.resume()
        #expect(waited(raisingRan, seconds: 5), "\(ran.values)")
        #expect(!eventually(within: 0.2) { ran.values.contains("after0") },
                "background items after the raising item ran on the high band: \(ran.values)")
    }

    /// Nothing drains the main queue here (the test does not run on the main thread,
    /// so it cannot call dispatchMain()): a correct sync waits for the main thread,
    /// blocked in the scheduler's eyes, and its block does not run on the worker.
    static func syncOntoQueueTargetingMain() {
        startRuntime(RuntimeConfiguration(cores: 2))
        let ui = DispatchQueue(label: "review.ui", target: .main)
        let ran = Recorder<Bool>()
        DispatchQueue.global().async {
            ui.sync { ran.append(ThreadContext.current.isMainThread) }
        }
        // The proof that the window passed: the worker is inside its sync, waiting.
        #expect(eventually { Runtime.shared.scheduler.blockedThreads { reason in
            if case .sync(let queue, _) = reason { return queue === ui }
            return false
        } == 1 })
        #expect(ran.values.isEmpty, "the block ran off the main thread")
    }

    static func startWithRefusedThread() {
        // Leave room for about 8 stacks of 64 MiB, then ask for 128 threads.
        var pages = 0
        if let file = fopen("/proc/self/statm", "r") {
            var buffer = [CChar](repeating: 0, count: 128)
            if fgets(&buffer, 128, file) != nil {
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                pages = Int(text.split(separator: " ").first ?? "") ?? 0
            }
            fclose(file)
        }
        let limit = rlim_t(pages * Int(getpagesize()) + 512 << 20)
        // Under AddressSanitizer each new thread would map an 11 MB fake stack on its
        // first call, after the last 64 MiB stack took the address space left: it would
        // end the process (out of memory) instead of refusing a thread.
        rl_test_address_sanitizer_stop_fake_stacks()
        var rl = rlimit(rlim_cur: limit, rlim_max: limit)
        guard setrlimit(Int32(RLIMIT_AS.rawValue), &rl) == 0 else { Issue.record("setrlimit"); return }
        let configuration = RuntimeConfiguration(cores: 4, workersPerCore: 16, reservePerCore: 16,
                                                 workerStackBytes: 64 << 20)
        do throws(RuntimeError) {
            try Runtime.start(configuration: configuration)
            Issue.record("started 128 threads of 64 MiB under a small RLIMIT_AS")
        } catch {
            guard case .threadCreationFailed = error else { Issue.record("unexpected error \(error)"); return }
            // Memory for the stacks ran out, not the thread limit: the message says
            // which limit, and the keys to change with their values.
            let text = error.description
            #expect(text.contains("the address-space limit RLIMIT_AS is \(limit) bytes"), "\(text)")
            #expect(text.contains("'workerStackBytes' (67108864)") && text.contains("'workersPerCore' (16)"), "\(text)")
            #expect(!text.contains("RLIMIT_NPROC"), "\(text)")
        }
    }

    /// 2 cores: 2 high-band workers, 1 utility, 1 background, 2 reserve (6 pool threads).
    /// Every one waits with a timeout while work is pending: the stall watch reports
    /// the work that waits (a warning, which proves it looked past the grace period),
    /// but no deadlock, and nothing is killed.
    static func timedWaitsAreNotADeadlock() {
        startRuntime(twoCoreConfiguration(grace: 200))
        guard poolParked() else { Issue.record("the pool never parked: \(Runtime.statistics)"); return }
        let long = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let queues: [DispatchQueue] = [.global(qos: .utility), .global(qos: .background), .global(), .global(),
                                       .global(), .global()]
        for (index, queue) in queues.enumerated() {
            queue.async(group: finished) { _ = long.wait(timeout: .now() + 20) }
            guard eventually({ blockedThreadCount == index + 1 }) else {
                Issue.record("only \(blockedThreadCount) of \(index + 1) blocked: \(Runtime.statistics)")
                return
            }
        }
        let reported = StallProbe.install("stall report")
        DispatchQueue.global().async(group: finished) {}  // pending; no thread is free for it
        #expect(eventually { reported() }, "the watch never reported the waiting work")
        for _ in 0..<queues.count { long.signal() }
        #expect(waited(finished))
    }

    static func holdBand(_ qosClass: DispatchQoS.QoSClass) -> Gate? {
        let gate = Gate(), started = DispatchSemaphore(value: 0)
        DispatchQueue.global(qos: qosClass).async {
            started.signal()
            gate.pass()
        }
        return waited(started) ? gate : nil
    }

    /// No reserve, so that only the raise can serve the waiter.
    static func workItemWaitWhileDraining() {
        startRuntime(RuntimeConfiguration(cores: 2, reservePerCore: 0))
        guard let utilityGate = holdBand(.utility) else { Issue.record("utility"); return }
        let queue = DispatchQueue(label: "review.draining")
        let firstGate = Gate(), laterGate = Gate()
        defer { utilityGate.open(); firstGate.open(); laterGate.open() }
        let firstStarted = DispatchSemaphore(value: 0)
        let bands = Recorder<WorkerBand?>()
        let item = DispatchWorkItem(qos: .background) { bands.append(currentBand) }
        // Both nodes go into one detached batch of the background-band drainer.
        queue.suspend()
        queue.async(qos: .background) {
            firstStarted.signal()
            firstGate.pass()
        }
        queue.async(execute: item)
        queue.resume()
        guard waited(firstStarted) else { Issue.record("first item never started"); return }
        // Other background work waits in the run queue.
        DispatchQueue.global(qos: .background).async { laterGate.pass() }
        let result = Recorder<DispatchTimeoutResult>()
        let done = DispatchSemaphore(value: 0)
        // The whole patience, not 2 s: the wait starts before `eventually` sees it, so
        // on a loaded machine 2 s ran out before the gate opened (a full run, 1 in ~12).
        // Without the raise the waiter is never served at all.
        DispatchQueue.global(qos: .userInitiated).async {
            result.append(item.wait(timeout: deadline()))
            done.signal()
        }
        #expect(eventually { blockedThreadCount == 1 })
        firstGate.open()
        #expect(waited(done, seconds: 2 * patienceSeconds))
        #expect(result.values == [.success], "the userInitiated waiter was not served: \(result.values)")
    }

    static func workItemWaitOnGlobalQueue() {
        startRuntime(RuntimeConfiguration(cores: 2, reservePerCore: 0))
        guard let utilityGate = holdBand(.utility), let backgroundGate = holdBand(.background) else {
            Issue.record("low band")
            return
        }
        defer { utilityGate.open(); backgroundGate.open() }
        let item = DispatchWorkItem {}
        DispatchQueue.global(qos: .background).async(execute: item)
        let result = Recorder<DispatchTimeoutResult>()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global(qos: .userInitiated).async {
            result.append(item.wait(timeout: .now() + 1))
            done.signal()
        }
        #expect(waited(done))
        #expect(result.values == [.success], "the userInitiated waiter was not served: \(result.values)")
    }
}
