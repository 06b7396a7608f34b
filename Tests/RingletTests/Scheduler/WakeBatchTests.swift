// The manager wakes the workers a timer window's pushes chose only once the whole
// window is pushed (Scheduler+WakeBatch.swift), so that on a busy machine a woken
// worker does not run one handler per wake-up; other threads are never deferred.
import CRingletTestSupport
import Testing
@testable import Ringlet

@Suite struct WakeBatchTests {
    @Test func pushesInsideTheManagersBatchWakeNobodyUntilItEnds() async {
        await #expect(processExitsWith: .success) { WakeBatchScenarios.managerBatch() }
    }

    @Test func aTimerWindowOnABusyCPUCostsAboutOneWakeUp() async {
        await #expect(processExitsWith: .success) { WakeBatchScenarios.windowOnOneCPU() }
    }
}

enum WakeBatchScenarios {
    /// On the manager thread: ten serial queues get an item each inside a batch. The
    /// workers were all parked, so none may run before the batch ends; then all run.
    static func managerBatch() {
        startRuntime(twoCoreConfiguration())
        guard poolParked() else { Issue.record("the pool never parked"); return }
        let ran = AtomicCounter()
        let done = DispatchGroup()
        let queues = (0..<10).map { DispatchQueue(label: "test.batch.\($0)") }
        let inside = onManager { () -> (ran: Int, deferred: Int) in
            let scheduler = RuntimeParts.shared.scheduler.takeUnretainedValue()
            scheduler.beginWakeBatch()
            for queue in queues { queue.async(group: done) { _ = ran.increment() } }
            let seen = (ran.value, scheduler.batchedWakes.count)
            scheduler.endWakeBatch()
            return seen
        }
        guard let inside else { Issue.record("the manager did not answer"); return }
        #expect(inside.ran == 0, "\(inside.ran) items ran before the batch ended")
        #expect(inside.deferred >= 1, "no wake-up was deferred")
        #expect(waited(done))
        #expect(ran.value == 10)
    }

    /// 100 one-shot timers with the same deadline, on one serial queue, in a process
    /// pinned to one CPU (where a woken worker may preempt the manager): the window
    /// costs a handful of worker parks, not one per timer. Counted: the workers'
    /// voluntary switches (each park is one), which other processes loading the CPU
    /// do not add to — preemptions by them do not count. (Whether the kernel preempts
    /// the manager depends on its scheduler's state, so this bounds the cost rather
    /// than proving the batch; the test above proves the batch.)
    static func windowOnOneCPU() {
        startRuntime(RuntimeConfiguration(cores: 1, backgroundSchedIdle: false))
        guard pinProcessToOneCPU() else { Issue.record("could not pin the process to one CPU"); return }
        guard poolParked() else { Issue.record("the pool never parked"); return }
        let queue = DispatchQueue(label: "test.batch.window")
        let done = DispatchGroup()
        let parks = { ThreadControl.voluntaryContextSwitches(threadsNamed: "ringlet-w") ?? -1 }
        let before = parks()
        let deadline = DispatchTime.now() + .milliseconds(50)
        for _ in 0..<100 {
            done.enter()
            queue.asyncAfter(deadline: deadline) { done.leave() }
        }
        #expect(waited(done))
        settle(queue)
        let switches = parks() - before
        #expect(before >= 0 && switches < 40, "\(switches) worker parks for one window of 100 timers")
    }
}

/// Every thread of the process on one CPU (true when it worked).
func pinProcessToOneCPU() -> Bool { rl_test_pin_process_to_one_cpu() > 0 }
