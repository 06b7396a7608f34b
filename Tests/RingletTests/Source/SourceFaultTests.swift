import CRinglet
import Testing
@testable import Ringlet

/// Faults at the manager's syscall boundary (debug builds inject them on the manager
/// thread): each is retried or reported, and no timer fire or source event is lost
/// or doubled. Serialized: the faults hit whichever request the manager makes next.
@Suite(.serialized)
struct SourceFaultTests {
    private var managerThread: Int32 { RuntimeParts.shared.manager.takeUnretainedValue().threadID }

    /// A one-shot timer source and an asyncAfter item each run exactly once.
    private func timersFireOnce() -> Bool {
        let queue = DispatchQueue(label: "test.fault.timer")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let fires = AtomicCounter(), afters = AtomicCounter()
        timer.setEventHandler { fires.increment(by: Int(timer.data)) }
        timer.schedule(deadline: .now() + .milliseconds(5))
        timer.activate()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { afters.increment() }
        let fired = eventually { fires.value == 1 && afters.value == 1 }
        // Nothing is armed for the timer any more and what was queued has run.
        let disarmed = timerIsDisarmed(timer)
        settle(queue)
        timer.cancel()
        return fired && disarmed && fires.value == 1 && afters.value == 1
    }

    @Test(arguments: [Errno.interrupted, .busy, .tryAgain])
    func submitFailuresAreRetried(_ error: Errno) {
        SyscallFaults.inject(.ringSubmit, error, count: 3, thread: managerThread)
        defer { SyscallFaults.reset(thread: managerThread) }
        #expect(timersFireOnce())
    }

    @Test func aFullSubmissionQueueIsSubmittedAndTheRequestRetried() {
        SyscallFaults.inject(.ringPrepare, .busy, count: 2, thread: managerThread)
        defer { SyscallFaults.reset(thread: managerThread) }
        #expect(timersFireOnce())
    }

    @Test(arguments: [Errno.noMemory, .tryAgain, .interrupted])
    func aRefusedTimeoutIsArmedAgain(_ error: Errno) {
        SyscallFaults.inject(.requestCompletion, error, count: 1, thread: managerThread)
        defer { SyscallFaults.reset(thread: managerThread) }
        #expect(timersFireOnce())
    }

    @Test(arguments: [Errno.noMemory, .tryAgain, .cancelled])
    func aRefusedPollIsArmedAgainAndNoByteIsLost(_ error: Errno) {
        let pipe = TestPipe()
        RingPolledDescriptors.keep([pipe.readEnd])
        defer { RingPolledDescriptors.release([pipe.readEnd]) }
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd,
                                                   queue: DispatchQueue(label: "test.fault.poll"))
        let received = AtomicCounter()
        source.setEventHandler { received.increment(by: max(pipe.read(4096), 0)) }
        source.setCancelHandler {
            rl_close(pipe.readEnd)
            rl_close(pipe.writeEnd)
        }
        SyscallFaults.inject(.requestCompletion, error, count: 3, thread: managerThread)
        defer { SyscallFaults.reset(thread: managerThread) }
        source.activate()
        pipe.write(10)
        #expect(eventually { received.value == 10 })
        pipe.write(20)
        #expect(eventually { received.value == 30 })
        source.cancel()
    }

    /// A real completion-queue overflow: 96 pipes become readable at once on a ring
    /// whose completion queue holds 32 entries. Every byte still reaches its source.
    @Test func completionQueueOverflowLosesNoEvent() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2, ringEntries: 8))
            let queue = DispatchQueue(label: "test.fault.overflow", attributes: .concurrent)
            let pipes = (0..<96).map { _ in TestPipe() }
            RingPolledDescriptors.keep(pipes.map(\.readEnd))
            let counts = pipes.map { _ in AtomicCounter() }
            let registered = DispatchGroup()
            let sources = pipes.enumerated().map { index, pipe in
                let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
                source.setEventHandler { counts[index].increment(by: max(pipe.read(4096), 0)) }
                registered.enter()
                source.setRegistrationHandler { registered.leave() }
                if index % 2 == 0 { pipe.write(1) }  // ready before registration
                source.activate()
                return source
            }
            #expect(waited(registered))
            // Hold the manager while every other pipe becomes readable: the kernel
            // then has 48 completions for a 32-entry queue at the next io_uring_enter.
            let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            RuntimeParts.shared.manager.takeUnretainedValue().submit(.run { _ in
                held.signal()
                _ = release.wait(timeout: .now() + .seconds(10))
            })
            #expect(waited(held))
            for (index, pipe) in pipes.enumerated() where index % 2 == 1 { pipe.write(1) }
            release.signal()
            #expect(eventually { counts.allSatisfy { $0.value == 1 } })
            RuntimeParts.shared.manager.takeUnretainedValue().submit(.run { _ in
                held.signal()
                _ = release.wait(timeout: .now() + .seconds(10))
            })
            #expect(waited(held))
            for (index, pipe) in pipes.enumerated() { pipe.write(index % 7 + 1) }
            release.signal()
            #expect(eventually { counts.enumerated().allSatisfy { $0.element.value == 1 + $0.offset % 7 + 1 } })
            for source in sources { source.cancel() }
        }
    }
}
