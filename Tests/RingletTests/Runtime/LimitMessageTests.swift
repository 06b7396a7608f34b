// Messages for refusals that come from a limit: they name the limit that was reached
// (open files, threads, address space), its value, and the key or setting to change —
// never an old kernel when the kernel is fine, never the thread limit when memory ran out.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct LimitMessageTests {
    // MARK: pidfd_open

    @Test func onlyENOSYSFromPidfdOpenMeansAnOldKernel() {
        let limits = ProcessLimits(openFiles: 256, openFilesHard: 4096, systemFilesMax: 9000, systemFiles: 9000)
        let old = ManagerThread.pidfdRefusal(.notImplemented, pid: 42) { limits }
        #expect(old.contains("Linux 5.3 or later"))
        let perProcess = ManagerThread.pidfdRefusal(.tooManyOpenFiles, pid: 42) { limits }
        #expect(perProcess.contains("RLIMIT_NOFILE: 256 descriptors, hard limit 4096") && perProcess.contains("ulimit -n"))
        let system = ManagerThread.pidfdRefusal(.tooManyOpenFilesInSystem, pid: 42) { limits }
        #expect(system.contains("fs.file-max: 9000, 9000 open now") && system.contains("sysctl -w fs.file-max"))
        let other = ManagerThread.pidfdRefusal(.noMemory, pid: 42) { limits }
        #expect(other.contains("ENOMEM") && other.contains("pid 42"))
        for text in [perProcess, system, other] { #expect(!text.contains("5.3"), "\(text)") }
    }

    /// A process source made when the open-files limit is spent says so, with the
    /// limit's value, instead of asking for Linux 5.3.
    @Test func aPidfdRefusedForTheOpenFilesLimitNamesIt() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startRuntime(RuntimeConfiguration(cores: 2))
            let child = rl_process_spawn_exit(0, 5_000_000_000)
            guard child > 0 else { exit(3) }
            // Every descriptor below a low limit in use: pidfd_open gets EMFILE.
            var limit = rlimit(rlim_cur: 64, rlim_max: 1 << 20)
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = 64
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { exit(4) }
            var filling: [Int32] = []
            filling.reserveCapacity(64)
            while case let fd = open("/dev/null", O_RDONLY), fd >= 0 { filling.append(fd) }
            let source = DispatchSource.makeProcessSource(identifier: child, eventMask: .exit,
                                                          queue: DispatchQueue(label: "test.limits.pidfd"))
            // The registration handler runs after the manager tried (and warned).
            let registered = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { registered.signal() }
            source.activate()
            #expect(waited(registered))
            kill(child, SIGKILL)
            // Given back before exit: LeakSanitizer's check at exit opens descriptors
            // (/proc/self/task, its report file); without any it ends the process
            // with status 1 and can write no report.
            for fd in filling { close(fd) }
            exit(0)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("process source for pid"), "\(text)")
        #expect(text.contains("pidfd_open failed (EMFILE)"), "\(text)")
        #expect(text.contains("RLIMIT_NOFILE: 64 descriptors"), "\(text)")
        #expect(!text.contains("Linux 5.3"), "\(text)")
    }

    // MARK: io_uring_setup

    @Test func everyErrorIoUringSetupDocumentsHasItsCause() {
        let limits = ProcessLimits(openFiles: 128, openFilesHard: 1024, systemFilesMax: 5000)
        let cases: [(Errno, String)] = [
            (.tooManyOpenFiles, "RLIMIT_NOFILE: 128 descriptors"),
            (.tooManyOpenFilesInSystem, "fs.file-max: 5000"),
            (.badAddress, "bug in Ringlet"),
            (.noMemory, "RLIMIT_MEMLOCK"),
            (.noMemory, "each entry costs 128 bytes"),
            (.invalidArgument, "ringEntries"),
            (.notPermitted, "seccomp"),
            (.notImplemented, "CONFIG_IO_URING"),
        ]
        for (errno, cause) in cases {
            let text = RingUnavailable(errno: errno, ioUringDisabled: 0, limits: limits).description
            #expect(text.contains(cause), "\(errno.name): \(text)")
            #expect(text.contains("(io_uring_setup failed with \(errno.name))"), "\(text)")
            #expect(!text.contains("does not know how to fix"), "\(text)")
        }
    }

    // MARK: Thread creation

    private var generic: RuntimeConfiguration { RuntimeConfiguration(cores: 4) }

    @Test func eagainWithNoRoomForAStackBlamesTheAddressSpaceNotTheThreadLimit() {
        let limits = ProcessLimits(addressSpaceBytes: 100 << 20, addressSpaceInUseBytes: (100 << 20) - 200_000,
                                   userThreads: 63_000, processThreads: 6)
        let refusal = ThreadRefusal(errno: .tryAgain, created: 5, configuration: generic, limits: limits)
        #expect(refusal.cause == .addressSpace)
        let text = refusal.description
        for part in ["RLIMIT_AS is 104857600 bytes", "maps 104657600 already", "'workerStackBytes' (524288)",
                     "the 8 threads still to create need 8 × 528384", "'workersPerCore' (2)", "'reservePerCore' (1)",
                     "the runtime creates 13 threads: 'cores' 4 × ('workersPerCore' 2 + 'reservePerCore' 1) + 1 manager",
                     "ulimit -v"] {
            #expect(text.contains(part), "\(part): \(text)")
        }
        #expect(!text.contains("RLIMIT_NPROC"), "\(text)")
    }

    /// On epoll the manager brings two I/O helper threads: the count the message gives
    /// is the one the limit must allow (it said 13 where 15 are needed).
    @Test func onEpollTheThreadCountIncludesTheIOHelpers() {
        let refusal = ThreadRefusal(errno: .tryAgain, created: 5, configuration: generic,
                                    limits: ProcessLimits(addressSpaceBytes: 8 << 30, addressSpaceInUseBytes: 1 << 30,
                                                          userThreads: 9, processThreads: 5),
                                    ioHelperThreads: 2)
        #expect(refusal.totalThreads == 15)
        #expect(refusal.description.contains("the runtime creates 15 threads: 'cores' 4 × ('workersPerCore' 2 + "
            + "'reservePerCore' 1) + 1 manager + 2 I/O helper threads of the epoll backend"), "\(refusal)")
    }

    @Test func eagainWithRoomForStacksBlamesTheThreadLimitItFinds() {
        let nproc = ThreadRefusal(errno: .tryAgain, created: 3, configuration: generic,
                                  limits: ProcessLimits(addressSpaceBytes: 8 << 30, addressSpaceInUseBytes: 1 << 30,
                                                        userThreads: 40, processThreads: 4))
        #expect(nproc.cause == .userThreads)
        #expect(nproc.description.contains("RLIMIT_NPROC allows 40 threads for this user"), "\(nproc)")
        #expect(nproc.description.contains("(this process has 4)") && nproc.description.contains("ulimit -u"))
        #expect(!nproc.description.contains("RLIMIT_AS"))

        let cgroup = ThreadRefusal(errno: .tryAgain, created: 3, configuration: generic,
                                   limits: ProcessLimits(userThreads: 63_000, cgroupPidsMax: 10, cgroupPids: 10))
        #expect(cgroup.cause == .cgroupPids && cgroup.description.contains("pids.max is 10"), "\(cgroup)")

        let system = ThreadRefusal(errno: .tryAgain, created: 3, configuration: generic,
                                   limits: ProcessLimits(systemThreadsMax: 500, systemThreads: 500))
        #expect(system.cause == .systemThreads && system.description.contains("kernel.threads-max is 500"))

        let strict = ThreadRefusal(errno: .tryAgain, created: 3, configuration: generic,
                                   limits: ProcessLimits(overcommitMode: 2))
        #expect(strict.cause == .committedMemory && strict.description.contains("vm.overcommit_memory is 2"))

        let unknown = ThreadRefusal(errno: .tryAgain, created: 3, configuration: generic, limits: ProcessLimits())
        #expect(unknown.cause == .unknownShortage)
        #expect(unknown.description.contains("either the thread limit or memory for a stack"), "\(unknown)")
    }

    @Test func theRuntimeErrorCarriesTheRefusal() {
        let refusal = ThreadRefusal(errno: .tryAgain, created: 2, configuration: generic,
                                    limits: ProcessLimits(userThreads: 10, processThreads: 3))
        let error = RuntimeError.threadCreationFailed(created: 1, wanted: 12, errno: .tryAgain, refusal: refusal)
        #expect(error.description.hasPrefix("could not create thread 3 of the runtime's 13: EAGAIN: the thread limit"),
                "\(error)")
    }

    @Test func anEventfdRefusedForOpenFilesNamesTheLimit() {
        let text = RuntimeError.eventfdUnavailable(.tooManyOpenFiles).description
        #expect(text.contains("EMFILE") && text.contains("RLIMIT_NOFILE: "), "\(text)")
    }
}
