import CRinglet
import Testing
@testable import Ringlet

/// Whether this machine lets us create an io_uring. Only the tests of io_uring itself
/// skip (with this reason) when it does not, e.g. in a container whose seccomp profile
/// forbids it: the runtime, and every other suite, runs there on the epoll backend
/// (Architecture, "The epoll backend"), as under RINGLET_BACKEND=epoll.
enum RingAvailability {
    static let refusal: RingUnavailable? = {
        do throws(RingUnavailable) {
            _ = try Ring(submissionEntries: 8, completionEntries: 32)
            return nil
        } catch {
            return error
        }
    }()
    static var works: Bool { refusal == nil }

    /// The backends a `Ring` can be made with here: epoll always, io_uring when allowed.
    static var backends: [KernelBackend] { works ? [.ioUring, .epoll] : [.epoll] }
}

/// A ring of either backend, for the tests that hold for both.
func makeRing(_ backend: KernelBackend) throws -> Ring {
    switch backend {
    case .ioUring: return try Ring(submissionEntries: 8, completionEntries: 32)
    case .epoll: return try Ring(epollWithHelperThreads: 1)
    }
}

/// Every completion waiting on `ring`.
func drain(_ ring: Ring) -> [Ring.Completion] {
    var completions: [Ring.Completion] = []
    while let completion = ring.nextCompletion() { completions.append(completion) }
    return completions
}

/// The manager's ring at the syscall boundary, on a real kernel: io_uring and its epoll
/// emulation answer the same requests with the same completions.
@Suite(.serialized)
struct RingTests {
    private let ms: UInt64 = 1_000_000

    @Test(.enabled(if: RingAvailability.works, "io_uring is refused here"))
    func createsARingWithTheBestSetupFlagsTheKernelTakes() throws {
        let ring = try Ring(submissionEntries: 16, completionEntries: 16)
        // Linux 6.1+ takes SINGLE_ISSUER|DEFER_TASKRUN; older kernels fall back.
        #expect(["SINGLE_ISSUER|DEFER_TASKRUN", "COOP_TASKRUN", "no setup flags"].contains(ring.setupDescription))
        #expect(ring.droppedCompletions == 0)
    }

    @Test(arguments: RingAvailability.backends)
    func anAbsoluteTimeoutCompletesAtItsDeadlineNotBefore(_ backend: KernelBackend) throws {
        let ring = try makeRing(backend)
        let deadline = MonotonicClock.nanoseconds + 20 * ms
        try ring.prepareTimeout(deadline: deadline, userData: 7)
        _ = try ring.submitAndWait(waitFor: 1)
        let woke = MonotonicClock.nanoseconds
        let completions = drain(ring)
        #expect(completions == [Ring.Completion(userData: 7, result: -Errno.timeExpired.rawValue, flags: 0)])
        #expect(woke >= deadline)
    }

    @Test(arguments: RingAvailability.backends)
    func aRemovedTimeoutIsCancelled(_ backend: KernelBackend) throws {
        let ring = try makeRing(backend)
        try ring.prepareTimeout(deadline: MonotonicClock.nanoseconds + 60_000 * ms, userData: 1)
        _ = try ring.submitAndWait(waitFor: 0)
        try ring.prepareTimeoutRemove(target: 1, userData: 2)
        _ = try ring.submitAndWait(waitFor: 2)
        let byData = Dictionary(uniqueKeysWithValues: drain(ring).map { ($0.userData, $0.result) })
        #expect(byData[1] == -Errno.cancelled.rawValue)
        #expect(byData[2] == 0)
    }

    @Test(arguments: RingAvailability.backends)
    func anEventfdReadCompletesWhenAnotherThreadSignals(_ backend: KernelBackend) throws {
        let ring = try makeRing(backend)
        let eventfd = try EventFD()
        defer { eventfd.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 8)
        defer { buffer.deallocate() }
        try ring.prepareRead(fd: eventfd.fd, into: buffer, offset: 0, userData: 3)
        _ = try ring.submitAndWait(waitFor: 0)
        #expect(ring.nextCompletion() == nil)
        DispatchQueue.global().async { eventfd.signal() }
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 3, result: 8, flags: 0)])
        #expect(buffer.load(as: UInt64.self) == 1)
    }

    @Test(arguments: RingAvailability.backends)
    func anInterruptedSubmitIsRetried(_ backend: KernelBackend) throws {
        let ring = try makeRing(backend)
        try ring.prepareTimeout(deadline: MonotonicClock.nanoseconds + 1 * ms, userData: 9)
        SyscallFaults.inject(.ringSubmit, .interrupted, count: 3)
        defer { SyscallFaults.reset() }
        _ = try ring.submitAndWait(waitFor: 1)
        // A signal sent to the process (other suites raise some) may end the kernel's
        // wait after the submission, which io_uring_enter then reports instead of EINTR.
        var completions = drain(ring)
        let start = monotonicNanoseconds
        while completions.isEmpty && secondsSince(start) < patienceSeconds {
            _ = try ring.submitAndWait(waitFor: 1)
            completions = drain(ring)
        }
        #expect(completions.map(\.userData) == [9])
    }

    @Test(arguments: RingAvailability.backends)
    func aBusyRingIsReportedToTheOwner(_ backend: KernelBackend) throws {
        let ring = try makeRing(backend)
        SyscallFaults.inject(.ringSubmit, .tryAgain)
        defer { SyscallFaults.reset() }
        #expect(throws: Errno.tryAgain) { _ = try ring.submitAndWait(waitFor: 1) }
    }
}

/// Why io_uring was refused, named with the fix — no kernel needed.
@Suite(.serialized) struct RingUnavailableTests {
    @Test func injectedSetupFailuresBecomeExplanations() {
        SyscallFaults.inject(.ringSetup, .notPermitted)
        defer { SyscallFaults.reset() }
        do throws(RingUnavailable) {
            _ = try Ring(submissionEntries: 8, completionEntries: 32)
            Issue.record("the injected EPERM was not reported")
        } catch {
            #expect(error.errno == .notPermitted)
            #expect(error.description.contains("EPERM"))
        }
    }

    @Test func eachCauseNamesItsFix() {
        let cases: [(Errno, Int?, String)] = [
            (.notImplemented, nil, "CONFIG_IO_URING"),
            (.notPermitted, 2, "sysctl -w kernel.io_uring_disabled=0"),
            (.notPermitted, 1, "kernel.io_uring_group"),
            (.notPermitted, 0, "seccomp"),
            (.notPermitted, nil, "seccomp"),
            (.noMemory, 0, "RLIMIT_MEMLOCK"),
            (.invalidArgument, 0, "ringEntries"),
        ]
        for (errno, sysctl, fix) in cases {
            let text = RingUnavailable(errno: errno, ioUringDisabled: sysctl).description
            #expect(text.contains(fix), "\(errno.name), io_uring_disabled=\(String(describing: sysctl)): \(text)")
            #expect(text.contains(errno.name))
        }
    }

    @Test func aMissingOpcodeNamesItAndTheKernelNeeded() {
        let text = RingUnavailable(errno: .invalidArgument, ioUringDisabled: nil,
                                   missingOpcode: "IORING_OP_READ (Linux 5.6)").description
        #expect(text.contains("IORING_OP_READ"))
        #expect(text.contains("Linux 5.10"))
    }

    @Test(.enabled(if: RingAvailability.works, "io_uring is refused here"))
    func theManagersRingHasEveryOpcodeItNeeds() throws {
        // On this kernel the probe finds them all (a kernel without one refuses at start).
        _ = try Ring(submissionEntries: 8, completionEntries: 32)
    }

    /// `ringlet board`'s list: only FUTEX_WAKE (the manager then wakes workers with
    /// futex(2)) and the socket layer's operations are optional, and where the manager's
    /// ring starts, the probe lists every operation that is not.
    @Test(.enabled(if: RingAvailability.works, "io_uring is refused here"))
    func onlyTheQueuedFutexWakeAndSocketsAreOptional() {
        let operations = IOUringFeatures.probe().operations
        #expect(operations.filter(\.optional).map(\.name).allSatisfy {
            $0.hasPrefix("FUTEX_WAKE") || $0.contains(": sockets")
        })
        #expect(operations.contains { $0.optional })
        for operation in operations where !operation.optional {
            #expect(operation.supported != false, "the manager's ring started without \(operation.name)")
        }
    }

    @Test func anEventfdFailureIsThrown() {
        SyscallFaults.inject(.eventfdCreate, .noMemory)
        defer { SyscallFaults.reset() }
        #expect(throws: Errno.noMemory) { _ = try EventFD() }
    }
}
