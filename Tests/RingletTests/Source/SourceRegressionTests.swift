import CRinglet
import CRingletTestSupport
import Glibc
import Synchronization
import Testing
@testable import Ringlet

/// Regressions found reviewing dispatch sources: each test failed before its fix.
@Suite struct SourceRegressionTests {
    /// GCD delivers data merged into an inactive source once it is activated; it used
    /// to wait for the next merge (the merge found no delivery node and only stored).
    @Test func dataMergedBeforeActivationIsDeliveredOnActivation() {
        let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.regression.early-data"))
        let seen = Recorder<UInt>()
        source.setEventHandler { seen.append(source.data) }
        source.add(data: 5)
        source.activate()
        #expect(eventually { seen.count == 1 })
        #expect(seen.values == [5])
        source.cancel()
    }

    /// GCD: suspend() and resume() on an inactive source balance each other and leave
    /// it inactive; resume() activates only when there is no suspension to undo. The
    /// resume used to activate the source with the suspension still counted, so it
    /// never delivered.
    @Test func suspendAndResumeBeforeActivationBalance() {
        let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.regression.inactive-suspend"))
        let seen = Recorder<UInt>()
        source.setEventHandler { seen.append(source.data) }
        source.suspend()
        source.resume()
        source.activate()
        source.add(data: 3)
        #expect(eventually { seen.count == 1 })
        #expect(seen.values == [3])
        source.cancel()
    }

    /// A process that is already gone is reported at once, but only after the
    /// registration handler: it used to be posted before the registration node.
    @Test func registrationHandlerRunsBeforeTheExitOfAProcessAlreadyReaped() {
        let pid = rl_process_spawn_exit(0, 0)
        #expect(pid > 0)
        #expect(rl_process_reap(pid) == 0)
        let source = DispatchSource.makeProcessSource(identifier: pid, eventMask: .exit,
                                                      queue: DispatchQueue(label: "test.regression.reaped"))
        let log = Recorder<String>()
        source.setRegistrationHandler { log.append("registered") }
        source.setEventHandler { log.append("event") }
        source.activate()
        #expect(eventually { log.count == 2 })
        #expect(log.values == ["registered", "event"])
        source.cancel()
    }

    /// The fd number of an active read source now names another file (closed and
    /// reused, here in one step with dup2): the old file's readiness must not run the
    /// handler against the new owner. The source is cancelled with a warning instead.
    @Test func aDescriptorReplacedUnderTheSourceIsNotReadForTheNewOwner() {
        let old = TestPipe(), new = TestPipe()
        let source = DispatchSource.makeReadSource(fileDescriptor: old.readEnd,
                                                   queue: DispatchQueue(label: "test.regression.reused-fd"))
        let events = AtomicCounter()
        let registered = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.setEventHandler {
            events.increment()
            old.read(4096)  // the handler reads "its" fd: after dup2, the new pipe
        }
        source.setCancelHandler { cancelled.signal() }
        source.activate()
        #expect(waited(registered))
        let oldReader = dup(old.readEnd)  // keeps the old pipe readable: no EPIPE below
        #expect(dup2(new.readEnd, old.readEnd) == old.readEnd)  // misuse: the fd now names `new`
        new.write(8)
        old.write(4)  // the kernel's poll still watches the old pipe: it fires
        #expect(waited(cancelled))
        #expect(events.value == 0)
        #expect(new.read(4096) == 8)  // the new owner's bytes are still there
        for fd in [old.readEnd, old.writeEnd, new.readEnd, new.writeEnd, oldReader] { rl_close(fd) }
    }

    /// The same for a file-system source: once its fd names another file, its events
    /// (inotify still watches the old inode) cancel it instead of reaching the handler.
    @Test func aFileReplacedUnderAFileSystemSourceCancelsIt() {
        let base = "/tmp/ringlet-fs-reuse-\(rl_process_id())-\(monotonicNanoseconds)"
        let watched = open(base + "-a", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let other = open(base + "-b", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let writer = open(base + "-a", O_WRONLY | O_CLOEXEC)
        #expect(watched >= 0 && other >= 0 && writer >= 0)
        let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: watched, eventMask: .write,
                                                               queue: DispatchQueue(label: "test.regression.fs-fd"))
        let events = AtomicCounter()
        let registered = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.setEventHandler { events.increment() }
        source.setCancelHandler { cancelled.signal() }
        source.activate()
        #expect(waited(registered))
        #expect(dup2(other, watched) == watched)  // misuse: the fd now names the other file
        let byte: [UInt8] = [1]
        #expect(byte.withUnsafeBytes { rl_fd_write(writer, $0.baseAddress, 1) } == 1)
        #expect(waited(cancelled))
        #expect(events.value == 0)
        for fd in [watched, other, writer] { rl_close(fd) }
        _ = unlink(base + "-a")
        _ = unlink(base + "-b")
    }

    /// On kernels before 5.13 every multishot poll fails with EINVAL. Sources
    /// registered together all see it; only the first used to be re-armed (one-shot)
    /// and every other one was cancelled as if its descriptor were bad.
    @Test func multishotRefusedForSeveralSourcesAtOnceKeepsThemAll() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2))
            let manager = RuntimeParts.shared.manager.takeUnretainedValue()
            let queue = DispatchQueue(label: "test.regression.old-kernel", attributes: .concurrent)
            let pipes = (0..<3).map { _ in TestPipe() }
            RingPolledDescriptors.keep(pipes.map(\.readEnd))
            let counts = pipes.map { _ in AtomicCounter() }
            let cancels = AtomicCounter()
            let registered = DispatchGroup()
            let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            // Hold the manager so that the three registrations are made in one batch.
            manager.submit(.run { _ in
                held.signal()
                _ = release.wait(timeout: .now() + .seconds(10))
            })
            #expect(waited(held))
            SyscallFaults.inject(.requestCompletion, .invalidArgument, count: 3, thread: manager.threadID)
            let sources = pipes.enumerated().map { index, pipe in
                let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
                source.setEventHandler { counts[index].increment(by: max(pipe.read(4096), 0)) }
                source.setCancelHandler { cancels.increment() }
                registered.enter()
                source.setRegistrationHandler { registered.leave() }
                source.activate()
                return source
            }
            release.signal()
            #expect(waited(registered))
            for (index, pipe) in pipes.enumerated() { pipe.write(index + 1) }
            #expect(eventually { counts.enumerated().allSatisfy { $0.element.value == $0.offset + 1 } })
            #expect(cancels.value == 0)
            for source in sources { source.cancel() }
        }
    }

    /// With one-shot polls (kernels before 5.13) a poll that ended on a descriptor
    /// still ready must not be re-armed before the handler has run: it completes at
    /// once, again and again, and the manager spins while the source is suspended.
    @Test func aSuspendedReadSourceDoesNotSpinTheManagerWithOneShotPolls() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2))
            let manager = RuntimeParts.shared.manager.takeUnretainedValue()
            let switched = DispatchSemaphore(value: 0)
            manager.submit(.run { _ in
                manager.multishotPolls = false  // as on a kernel before 5.13
                switched.signal()
            })
            #expect(waited(switched))
            let pipe = TestPipe()
            RingPolledDescriptors.keep([pipe.readEnd])
            let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd,
                                                       queue: DispatchQueue(label: "test.regression.one-shot"))
            let received = AtomicCounter()
            let registered = DispatchSemaphore(value: 0)
            source.setEventHandler { received.increment(by: max(pipe.read(4096), 0)) }
            source.setRegistrationHandler { registered.signal() }
            source.activate()
            #expect(waited(registered))
            pipe.write(3)
            #expect(eventually { received.value == 3 })
            source.suspend()
            pipe.write(10)
            let before = manager.counters.wakeups
            sleepMilliseconds(100)
            let woken = manager.counters.wakeups - before
            #expect(woken < 20, "the manager woke \(woken) times in 100 ms for one suspended source")
            source.resume()
            #expect(eventually { received.value == 13 })
            pipe.write(5)  // the poll is armed again after the handler
            #expect(eventually { received.value == 18 })
            source.cancel()
        }
    }

    /// A regular file is always readable and the kernel cannot keep a poll on it:
    /// each poll ends at once. Re-arming it immediately made the manager spin for as
    /// long as the source was suspended, whatever the kernel.
    @Test func aSuspendedReadSourceOnARegularFileDoesNotSpinTheManager() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2))
            let manager = RuntimeParts.shared.manager.takeUnretainedValue()
            let path = "/tmp/ringlet-regular-\(rl_process_id())-\(monotonicNanoseconds)"
            let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            _ = unlink(path)
            let bytes = [UInt8](repeating: 1, count: 16)
            #expect(bytes.withUnsafeBytes { rl_fd_write(fd, $0.baseAddress, 16) } == 16)
            _ = lseek(fd, 0, SEEK_SET)
            let source = DispatchSource.makeReadSource(fileDescriptor: fd,
                                                       queue: DispatchQueue(label: "test.regression.regular"))
            let runs = AtomicCounter()
            let suspended = DispatchSemaphore(value: 0)
            source.setEventHandler {
                // Level-triggered: the handler would run again at once; stop it here.
                if runs.increment() == 1 { source.suspend() }
                suspended.signal()
            }
            source.activate()
            #expect(waited(suspended))
            let before = manager.counters.wakeups
            sleepMilliseconds(100)
            let woken = manager.counters.wakeups - before
            #expect(woken < 20, "the manager woke \(woken) times in 100 ms for one suspended source")
            let cancelled = DispatchSemaphore(value: 0)
            source.setCancelHandler {
                rl_close(fd)
                cancelled.signal()
            }
            source.cancel()
            source.resume()
            #expect(waited(cancelled))
            #expect(runs.value == 1)
        }
    }

    /// A read source cancelled while the kernel still holds a wake-up of its poll: the
    /// byte is written on the manager thread just before the cancel, so the ring's
    /// deferred task work (IORING_SETUP_DEFER_TASKRUN runs it only when the manager
    /// waits) has not run when the removal is submitted, and the kernel answers it
    /// EALREADY, the multishot poll staying armed. The cancellation waited for that
    /// poll's last completion for ever: no cancel handler, the source's slot held (the
    /// events iterator of a read source, cancelled right after an element, hung so).
    @Test func aReadSourceCancelledWhileItsPollIsWakingStillFinishes() {
        let pipe = TestPipe()
        RingPolledDescriptors.keep([pipe.readEnd])
        defer {
            RingPolledDescriptors.release([pipe.readEnd])
            rl_close(pipe.writeEnd)
        }
        let queue = DispatchQueue(label: "test.regression.cancel-waking-poll")
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        let registered = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.setEventHandler { _ = pipe.read(4096) }
        source.setCancelHandler {
            rl_close(pipe.readEnd)
            cancelled.signal()
        }
        source.activate()
        #expect(waited(registered))
        settle(queue)  // the poll is submitted
        nonisolated(unsafe) let cancelling = source
        onManager {
            pipe.write(1)
            cancelling.cancel()  // taken before the manager next waits
        }
        #expect(waited(cancelled), "the cancel handler never ran")
    }
}

/// SIGPIPE handler calls in `aWorkerWritingToAClosedPipeGetsSIGPIPELikeGCD`'s child.
private let sigpipeCalls = Atomic<Int>(0)

extension SourceRegressionTests {
    /// SIGPIPE is sent to the thread that wrote, like a fault: libdispatch's workers
    /// leave it (and SIGPROF) unblocked. Blocked on Ringlet's workers, it stayed
    /// pending there for ever: neither the program's handler nor the default action
    /// (ending the process) happened, and a signal source never saw it.
    @Test func aWorkerWritingToAClosedPipeGetsSIGPIPELikeGCD() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2))
            let handler: @convention(c) (Int32) -> Void = { _ in sigpipeCalls.wrappingAdd(1, ordering: .relaxed) }
            _ = signal(SIGPIPE, handler)
            let pipe = TestPipe()
            rl_close(pipe.readEnd)
            let written = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                var byte: UInt8 = 1
                #expect(rl_fd_write(pipe.writeEnd, &byte, 1) == -Int64(EPIPE))
                written.signal()
            }
            #expect(waited(written))
            #expect(eventually { sigpipeCalls.load(ordering: .relaxed) == 1 })
        }
    }
}

/// SIGUSR1 handler calls in `theProgramsHandlerKeepsItsNoRestartFlag`'s child.
private let interruptCalls = Atomic<Int>(0)

extension SourceRegressionTests {
    /// A program's handler installed without SA_RESTART interrupts blocking calls
    /// (read returns EINTR): how a main loop learns of SIGINT. Ringlet's chaining
    /// handler stood in front of it with SA_RESTART, so the read silently restarted.
    @Test func theProgramsHandlerKeepsItsNoRestartFlag() async {
        await #expect(processExitsWith: .success) {
            startRuntime(RuntimeConfiguration(cores: 2))
            let sigusr1: Int32 = 10
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in interruptCalls.wrappingAdd(1, ordering: .relaxed) }
            action.sa_flags = 0  // no SA_RESTART: a blocking call returns EINTR
            #expect(sigaction(sigusr1, &action, nil) == 0)
            let source = DispatchSource.makeSignalSource(signal: sigusr1,
                                                         queue: DispatchQueue(label: "test.regression.eintr"))
            let registered = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { registered.signal() }
            source.setEventHandler {}
            source.activate()
            #expect(waited(registered))
            let pipe = TestPipe()
            #expect(fcntl(pipe.readEnd, F_SETFL, 0) == 0)  // blocking reads
            let me = ThreadControl.threadID
            #expect(rl_signal_block_in_thread(sigusr1, 0) == 0)  // this thread takes the signal
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
                _ = rl_signal_send_thread(me, sigusr1)
            }
            // If the read is restarted, this ends it (and the test fails).
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(3)) { pipe.write(1) }
            var byte: UInt8 = 0
            let n = read(pipe.readEnd, &byte, 1)
            let error = errno
            #expect(n == -1 && error == EINTR, "read returned \(n) (errno \(error))")
            #expect(interruptCalls.load(ordering: .relaxed) == 1)
            source.cancel()
        }
    }
}
