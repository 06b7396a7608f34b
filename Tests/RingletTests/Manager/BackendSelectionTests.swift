// Which backend the runtime runs on, and why (Architecture, "The epoll backend"): io_uring
// when it works, epoll when io_uring is refused — with one line on stderr naming the
// cause — or when RINGLET_BACKEND or the `backend` key asks for it. The runtime starts in
// child processes, with the refusal injected (`SyscallFaults`, `.ringSetup`), so the
// tests mean the same on a kernel that allows io_uring and in a container that does not.
// The children start the runtime inside the exit test's task, so they set
// `swiftConcurrency` false: otherwise the runtime adds its note that async code stays on
// the toolchain's executor to the stderr these tests read line by line.

import Glibc
import Testing
@testable import Ringlet

@Suite struct BackendSelectionTests {
    // MARK: Falling back

    @Test func aSeccompRefusalFallsBackToEpollAndSaysWhy() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            BackendScenarios.fallsBack(when: .notPermitted)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("Ringlet: io_uring is not available (io_uring_setup failed with EPERM: a seccomp "
            + "filter forbids it, as a container's default profile does): running on epoll instead; to use io_uring, "
            + "allow io_uring_setup, io_uring_enter and io_uring_register in the container's seccomp profile "
            + "(for example --security-opt seccomp=unconfined); RINGLET_BACKEND=epoll or backend = epoll chooses "
            + "epoll without this warning\n"), "\(text)")
        #expect(text.components(separatedBy: "Ringlet:").count == 2, "not exactly one line: \(text)")
    }

    @Test func aKernelWithoutIoUringFallsBackToEpollAndSaysWhy() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            BackendScenarios.fallsBack(when: .notImplemented)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("(io_uring_setup failed with ENOSYS: this kernel has no io_uring): running on epoll "
            + "instead; to use io_uring, use a kernel built with CONFIG_IO_URING"), "\(text)")
    }

    @Test func aMemlockRefusalFallsBackToEpollAndSaysWhy() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            BackendScenarios.fallsBack(when: .noMemory)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("(io_uring_setup failed with ENOMEM: no memory for the ring (RLIMIT_MEMLOCK"), "\(text)")
        #expect(text.contains("running on epoll instead; to use io_uring, raise RLIMIT_MEMLOCK"), "\(text)")
    }

    /// The sysctl cannot be set from a test: the line is built from the refusal as read.
    @Test func aSysctlRefusalNamesTheSysctlAndHowToClearIt() {
        for (sysctl, cause, fix) in [
            (2, "the sysctl kernel.io_uring_disabled is 2", "run `sysctl -w kernel.io_uring_disabled=0` as root"),
            (1, "kernel.io_uring_disabled is 1 and this user is not in kernel.io_uring_group",
             "add this user to the group in kernel.io_uring_group, or set kernel.io_uring_disabled to 0"),
        ] {
            let refusal = RingUnavailable(errno: .notPermitted, ioUringDisabled: sysctl)
            let line = BackendSelection(backend: .epoll, reason: .ioUringRefused(refusal)).startLine ?? ""
            #expect(line.hasPrefix("Ringlet: io_uring is not available (io_uring_setup failed with EPERM: ")
                && line.contains(cause) && line.contains("): running on epoll instead; to use io_uring, " + fix),
                    "\(line)")
        }
    }

    // MARK: Asking for a backend

    @Test func ringletBackendEpollRunsOnEpollAndSaysSo() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            setenv("RINGLET_BACKEND", "epoll", 1)
            BackendScenarios.runsOnEpoll(RuntimeConfiguration(cores: 2, swiftConcurrency: false))
            guard case .requested(let how) = Runtime.current.backend.reason else {
                Issue.record("reason \(Runtime.current.backend)")
                return
            }
            #expect(how == "RINGLET_BACKEND=epoll")
        }
        #expect(result?.standardErrorText == "Ringlet: running on epoll (RINGLET_BACKEND=epoll)\n")
    }

    @Test func theBackendKeyRunsOnEpollAndSaysSo() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            unsetenv("RINGLET_BACKEND")
            BackendScenarios.runsOnEpoll(RuntimeConfiguration(cores: 2, backend: .epoll, swiftConcurrency: false))
        }
        #expect(result?.standardErrorText == "Ringlet: running on epoll (the configuration's backend = epoll)\n")
    }

    @Test(.enabled(if: RingAvailability.works, "io_uring is refused here"))
    func autoRunsOnIoUringWhereItWorksAndSaysNothing() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            unsetenv("RINGLET_BACKEND")
            startRuntime(RuntimeConfiguration(cores: 2, swiftConcurrency: false))
            #expect(Runtime.current.backend.backend == .ioUring)
            guard case .ioUringWorks = Runtime.current.backend.reason else {
                Issue.record("reason \(Runtime.current.backend)")
                return
            }
            #expect(Runtime.statistics.ioThreads == 0 && Runtime.statistics.backend == .ioUring)
        }
        #expect(result?.standardErrorText == "")
    }

    @Test func ioUringOnlyRefusesToStartWithoutIt() async {
        await #expect(processExitsWith: .success) {
            unsetenv("RINGLET_BACKEND")
            SyscallFaults.inject(.ringSetup, .notPermitted, thread: SyscallFaults.anyThread)
            do throws(RuntimeError) {
                try Runtime.start(configuration: RuntimeConfiguration(cores: 2, backend: .ioUring))
                Issue.record("started without io_uring")
            } catch {
                guard case .ioUringUnavailable(let refusal) = error else {
                    Issue.record("unexpected error: \(error)")
                    return
                }
                #expect(refusal.errno == .notPermitted && error.description.contains("seccomp"))
            }
        }
    }

    @Test func aRefusedEpollIsAnErrorNamingTheCallAndTheIoUringRefusal() async {
        await #expect(processExitsWith: .success) {
            unsetenv("RINGLET_BACKEND")
            SyscallFaults.inject(.ringSetup, .notPermitted, thread: SyscallFaults.anyThread)
            SyscallFaults.inject(.epollCreate, .tooManyOpenFiles, thread: SyscallFaults.anyThread)
            do throws(RuntimeError) {
                try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
                Issue.record("started without a backend")
            } catch {
                guard case .epollUnavailable(let call, let errno, let refusal) = error else {
                    Issue.record("unexpected error: \(error)")
                    return
                }
                #expect(call == "epoll_create1" && errno == .tooManyOpenFiles && refusal?.errno == .notPermitted)
                let text = error.description
                #expect(text.contains("epoll_create1 failed with EMFILE") && text.contains("RLIMIT_NOFILE"), "\(text)")
                #expect(text.contains("io_uring was not available either") && text.contains("seccomp"), "\(text)")
            }
        }
    }

    // MARK: The request

    @Test func theEnvironmentOverridesTheConfiguration() throws {
        let configured = RuntimeConfiguration(cores: 2, backend: .ioUring)
        let forced = try BackendRequest.resolve(configured, environment: "epoll")
        #expect(forced.choice == .epoll && forced.how == "RINGLET_BACKEND=epoll")
        let unset = try BackendRequest.resolve(configured, environment: "")
        #expect(unset.choice == .ioUring && unset.how == "the configuration's backend = io_uring")
        #expect(try BackendRequest.resolve(configured, environment: nil).choice == .ioUring)
    }

    @Test func anEnvironmentValueThatIsNoBackendIsRefused() {
        do throws(RuntimeError) {
            _ = try BackendRequest.resolve(RuntimeConfiguration(cores: 2), environment: "uring")
            Issue.record("RINGLET_BACKEND=uring was accepted")
        } catch {
            guard case .invalidConfiguration(let key, let reason) = error else {
                Issue.record("unexpected error: \(error)")
                return
            }
            #expect(key == "backend" && reason.contains("RINGLET_BACKEND='uring'")
                && reason.contains("auto, io_uring or epoll"), "\(reason)")
        }
    }

    @Test func theBackendKeyParses() throws {
        for (text, choice) in [("auto", RuntimeConfiguration.BackendChoice.auto), ("io_uring", .ioUring),
                               ("epoll", .epoll)] {
            let profile = try BoardProfile.parse("backend = \(text)", file: "test.profile", machine: testMachine)
            #expect(profile.configuration.backend == choice)
            #expect(profile.value(of: .backend) == text)
            #expect(profile.origin(of: .backend) == .file(line: 1))
        }
        let defaulted = try BoardProfile.parse("cores = 2", file: "test.profile", machine: testMachine)
        #expect(defaulted.configuration.backend == .auto)
        #expect(RuntimeConfiguration.BackendChoice.named("Epoll".utf8) == nil)
    }

    @Test func predictionAsksForNoRingWhenEpollIsChosen() throws {
        let selection = try BackendSelection.predict(for: RuntimeConfiguration(cores: 2, backend: .epoll))
        #expect(selection.backend == .epoll)
        #expect(selection.description.hasPrefix("epoll ("))
    }
}

enum BackendScenarios {
    /// io_uring refused with `errno` and nothing asked for: the runtime runs on epoll,
    /// knows why, and everything works.
    static func fallsBack(when errno: Errno) {
        unsetenv("RINGLET_BACKEND")
        SyscallFaults.inject(.ringSetup, errno, thread: SyscallFaults.anyThread)
        runsOnEpoll(RuntimeConfiguration(cores: 2, swiftConcurrency: false))
        guard case .ioUringRefused(let refusal) = Runtime.current.backend.reason else {
            Issue.record("reason \(Runtime.current.backend)")
            return
        }
        #expect(refusal.errno == errno)
    }

    /// Starts the runtime, which must run on epoll, and uses each kind of request.
    static func runsOnEpoll(_ configuration: RuntimeConfiguration) {
        startRuntime(configuration)
        #expect(Runtime.current.backend.backend == .epoll)
        let statistics = Runtime.statistics
        #expect(statistics.backend == .epoll && statistics.ioThreads == ManagerThread.epollHelperThreads)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { done.signal() }
        #expect(waited(done), "a timer did not fire")
        let pipe = TestPipe()
        let queue = DispatchQueue(label: "test.backend.epoll")
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        let received = AtomicCounter()
        source.setEventHandler { received.increment(by: max(pipe.read(4096), 0)) }
        source.activate()
        pipe.write(5)
        #expect(eventually { received.value == 5 }, "a read source saw \(received.value) of 5 bytes")
        source.cancel()
        let file = TestFile(count: 1 << 20)
        defer { file.remove() }
        let fd = file.open()
        let transcript = IOTranscript()
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in close(fd) }
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        #expect(transcript.finalError == 0 && transcript.data == patternBytes(1 << 20))
        channel.close()
    }
}
