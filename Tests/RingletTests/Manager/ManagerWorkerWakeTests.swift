// The manager wakes the workers its pushes chose from inside the io_uring_enter in
// which it goes to sleep, where the kernel takes futex wakes as requests (Linux 6.7),
// and with futex(2) otherwise or when the kernel refuses the queued wake
// (ManagerThread+WorkerWakes.swift). Nothing is lost either way: the item runs.
import Testing
@testable import Ringlet

@Suite struct ManagerWorkerWakeTests {
    @Test func aTimersWorkerIsWokenFromTheManagersWait() async {
        await #expect(processExitsWith: .success) { ManagerWorkerWakeScenarios.wake(fault: nil) }
    }

    @Test func aRefusedQueuedWakeIsMadeAtOnce() async {
        await #expect(processExitsWith: .success) { ManagerWorkerWakeScenarios.wake(fault: .invalidArgument) }
    }

    @Test func aFullSubmissionQueueWakesAtOnce() async {
        await #expect(processExitsWith: .success) { ManagerWorkerWakeScenarios.wake(fault: .busy) }
    }
}

enum ManagerWorkerWakeScenarios {
    /// With every pool thread parked, an `asyncAfter` item on a serial queue: its fire
    /// on the manager wakes one worker. `fault`, injected on the manager thread, hits
    /// that wake: EINVAL stands for the kernel refusing it, EBUSY for a submission
    /// queue that stayed full.
    static func wake(fault: Errno?) {
        startRuntime(twoCoreConfiguration())
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        guard let queued = onManager({ manager.ringForSources?.wakesFutexes ?? false }) else {
            Issue.record("the manager did not answer")
            return
        }
        guard poolParked() else { Issue.record("the pool never parked"); return }
        let before = (inWait: manager.workerWakesInWaitCount, refused: manager.workerWakesRefusedCount)
        if let fault { SyscallFaults.inject(.workerWake, fault, thread: manager.threadID) }
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue(label: "test.managerwake").asyncAfter(deadline: .now() + .milliseconds(5)) { ran.signal() }
        #expect(waited(ran), "the item's worker was never woken (fault \(fault.map { $0.name } ?? "none"))")
        let inWait = manager.workerWakesInWaitCount - before.inWait
        let refused = manager.workerWakesRefusedCount - before.refused
        guard queued else {
            // io_uring without IORING_OP_FUTEX_WAKE, or the epoll backend: futex(2) only.
            #expect(inWait == 0 && refused == 0, "\(inWait) wakes queued on a ring that cannot take them")
            return
        }
        switch fault {
        case nil:
            #expect(inWait >= 1 && refused == 0, "\(inWait) wakes queued, \(refused) refused")
        case .busy?:
            #expect(inWait == 0 && refused == 0, "with the queue full: \(inWait) queued, \(refused) refused")
        case .some:
            #expect(inWait >= 1 && refused == 1, "\(inWait) wakes queued, \(refused) refused")
        }
    }
}
