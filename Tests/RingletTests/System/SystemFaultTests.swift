// The OS boundary under injected faults: every wrapper of Sources/Ringlet/System that
// can fail transiently retries what it should (EINTR) and reports the rest as the
// errno, and the runtime turns each refusal into a warning or an error that says what
// failed — never a crash, never a silent stop. One table row per wrapper and fault.

import CRinglet
import Glibc
import Testing
@testable import Ringlet

/// What a wrapper did when its call failed.
enum WrapperOutcome: Equatable, CustomStringConvertible {
    case succeeded
    case threw(Errno)
    case gaveNothing

    var description: String {
        switch self {
        case .succeeded: return "succeeded"
        case .threw(let errno): return "threw \(errno.name)"
        case .gaveNothing: return "gave nil"
        }
    }
}

/// One row: inject `errno` into `call`, run the wrapper, expect `outcome`.
struct WrapperFault: Sendable, CustomTestStringConvertible {
    let call: SyscallFaults.Call
    let errno: Errno
    let outcome: WrapperOutcome
    let run: @Sendable () -> WrapperOutcome

    var testDescription: String { "\(call) fails with \(errno.name): \(outcome)" }
}

/// Runs a throwing wrapper and says what it did.
private func outcome<T>(_ body: () throws(Errno) -> T) -> WrapperOutcome {
    do throws(Errno) {
        _ = try body()
        return .succeeded
    } catch {
        return .threw(error)
    }
}

/// A descriptor every row may use: this process's stdin, opened on /dev/null.
private func devNull() -> Int32 { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }

/// An epoll set and an eventfd to put in it (made by calls other than the row's),
/// closed after `body`.
private func withEpollSet(_ body: (Int32, Int32) -> WrapperOutcome) -> WrapperOutcome {
    guard let epfd = try? EpollCalls.create(), let wake = try? EventFD() else { return .threw(.badFile) }
    defer { close(epfd); wake.close() }
    return body(epfd, wake.fd)
}

/// One look at the set, without waiting.
private func waitOnce(_ epfd: Int32) throws(Errno) {
    let data = UnsafeMutablePointer<UInt64>.allocate(capacity: 64)
    let events = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
    defer { data.deallocate(); events.deallocate() }
    _ = try EpollCalls.wait(epfd, data: data, events: events, timeoutMilliseconds: 0)
}

/// /dev/null opened for reading and writing, and a buffer, for a transfer.
private func transferOnDevNull(_ body: (Int32, UnsafeMutableRawPointer) -> WrapperOutcome) -> WrapperOutcome {
    let fd = Glibc.open("/dev/null", O_RDWR | O_CLOEXEC)
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
    defer { close(fd); buffer.deallocate() }
    return body(fd, buffer)
}

@Suite(.serialized) struct SystemFaultTests {
    static let rows: [WrapperFault] = [
        WrapperFault(call: .open, errno: .interrupted, outcome: .succeeded) {
            outcome { () throws(Errno) in
                let fd = try Descriptors.open("/dev/null", flags: O_RDONLY, mode: 0)
                Descriptors.close(fd)
            }
        },
        WrapperFault(call: .open, errno: .tooManyOpenFiles, outcome: .threw(.tooManyOpenFiles)) {
            outcome { () throws(Errno) in try Descriptors.open("/dev/null", flags: O_RDONLY, mode: 0) }
        },
        WrapperFault(call: .fstat, errno: .ioError, outcome: .threw(.ioError)) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return outcome { () throws(Errno) in try Descriptors.status(fd) }
        },
        WrapperFault(call: .fstat, errno: .ioError, outcome: .gaveNothing) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return Descriptors.identity(fd) == nil ? .gaveNothing : .succeeded
        },
        WrapperFault(call: .fstat, errno: .badFile, outcome: .threw(.badFile)) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return outcome { () throws(Errno) in try Descriptors.describe(fd) }
        },
        WrapperFault(call: .pollNow, errno: .interrupted, outcome: .succeeded) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return outcome { () throws(Errno) in try Descriptors.readyEvents(fd, Descriptors.readable) }
        },
        WrapperFault(call: .pollNow, errno: .noMemory, outcome: .threw(.noMemory)) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return outcome { () throws(Errno) in try Descriptors.readyEvents(fd, Descriptors.readable) }
        },
        WrapperFault(call: .byteCount, errno: .notSupported, outcome: .threw(.notSupported)) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return outcome { () throws(Errno) in try Descriptors.readableBytes(fd) }
        },
        WrapperFault(call: .seek, errno: .illegalSeek, outcome: .threw(.illegalSeek)) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return outcome { () throws(Errno) in try Descriptors.position(fd) }
        },
        WrapperFault(call: .pidfdOpen, errno: .tooManyOpenFiles, outcome: .threw(.tooManyOpenFiles)) {
            outcome { () throws(Errno) in try KernelWatches.processExit(ThreadControl.processID) }
        },
        WrapperFault(call: .inotifyWatch, errno: .noSpace, outcome: .threw(.noSpace)) {
            let fd = devNull()
            defer { Descriptors.close(fd) }
            return outcome { () throws(Errno) in try KernelWatches.fileChanges(of: fd) }
        },
        WrapperFault(call: .inotifyRead, errno: .ioError, outcome: .threw(.ioError)) {
            outcome { () throws(Errno) in try KernelWatches.takeFileChanges(-1) }
        },
        WrapperFault(call: .timerfd, errno: .tooManyOpenFiles, outcome: .threw(.tooManyOpenFiles)) {
            outcome { () throws(Errno) in try KernelWatches.clockChanges() }
        },
        WrapperFault(call: .signalfd, errno: .noMemory, outcome: .threw(.noMemory)) {
            outcome { () throws(Errno) in
                try SignalCalls.updateSignalFD(-1, watching: [UInt8](repeating: 0, count: Int(SignalCalls.limit)))
            }
        },
        WrapperFault(call: .signalfdRead, errno: .ioError, outcome: .threw(.ioError)) {
            var counts = [UInt32](repeating: 0, count: Int(SignalCalls.limit))
            return outcome { () throws(Errno) in try SignalCalls.takeFromSignalFD(-1, into: &counts) }
        },
        WrapperFault(call: .sigaction, errno: .invalidArgument, outcome: .threw(.invalidArgument)) {
            outcome { () throws(Errno) in try SignalCalls.install(10) }
        },
        WrapperFault(call: .reserveMemory, errno: .noMemory, outcome: .gaveNothing) {
            guard let memory = Memory.reserve(64) else { return .gaveNothing }
            Memory.free(memory)
            return .succeeded
        },
        // The epoll backend's calls (EpollCalls).
        WrapperFault(call: .epollCreate, errno: .tooManyOpenFiles, outcome: .threw(.tooManyOpenFiles)) {
            outcome { () throws(Errno) in Descriptors.close(try EpollCalls.create()) }
        },
        WrapperFault(call: .epollControl, errno: .noSpace, outcome: .threw(.noSpace)) {
            withEpollSet { epfd, eventfd in
                outcome { () throws(Errno) in
                    try EpollCalls.control(epfd, .add, fd: eventfd, events: Descriptors.readable, data: 1)
                }
            }
        },
        WrapperFault(call: .epollWait, errno: .interrupted, outcome: .succeeded) {
            withEpollSet { epfd, _ in outcome { () throws(Errno) in try waitOnce(epfd) } }
        },
        WrapperFault(call: .epollWait, errno: .noMemory, outcome: .threw(.noMemory)) {
            withEpollSet { epfd, _ in outcome { () throws(Errno) in try waitOnce(epfd) } }
        },
        WrapperFault(call: .timeoutTimer, errno: .tooManyOpenFiles, outcome: .threw(.tooManyOpenFiles)) {
            outcome { () throws(Errno) in Descriptors.close(try EpollCalls.makeTimeoutTimer()) }
        },
        WrapperFault(call: .transferNow, errno: .interrupted, outcome: .succeeded) {
            transferOnDevNull { fd, buffer in
                outcome { () throws(Errno) in
                    try EpollCalls.transferNow(write: false, fd: fd, buffer: buffer, length: 8, offset: nil)
                }
            }
        },
        WrapperFault(call: .transferNow, errno: .tryAgain, outcome: .threw(.tryAgain)) {
            transferOnDevNull { fd, buffer in
                outcome { () throws(Errno) in
                    try EpollCalls.transferNow(write: false, fd: fd, buffer: buffer, length: 8, offset: nil)
                }
            }
        },
        WrapperFault(call: .transferBlocking, errno: .interrupted, outcome: .succeeded) {
            transferOnDevNull { fd, buffer in
                outcome { () throws(Errno) in
                    try EpollCalls.transferBlocking(write: true, fd: fd, buffer: buffer, length: 8, offset: nil)
                }
            }
        },
        WrapperFault(call: .transferBlocking, errno: .ioError, outcome: .threw(.ioError)) {
            transferOnDevNull { fd, buffer in
                outcome { () throws(Errno) in
                    try EpollCalls.transferBlocking(write: false, fd: fd, buffer: buffer, length: 8, offset: 0)
                }
            }
        },
    ]

    /// The fault hits this thread's next call of the wrapper only.
    @Test(arguments: rows)
    func eachWrapperRetriesOrReports(_ row: WrapperFault) {
        SyscallFaults.inject(row.call, row.errno)
        defer { SyscallFaults.reset() }
        #expect(row.run() == row.outcome)
    }

    /// Without a fault, the same wrappers succeed (the rows prove the fault, not a
    /// broken call).
    @Test func withoutFaultsTheWrappersSucceed() {
        let fd = devNull()
        defer { Descriptors.close(fd) }
        #expect(outcome { () throws(Errno) in try Descriptors.status(fd) } == .succeeded)
        #expect(Descriptors.identity(fd) != nil)
        #expect(outcome { () throws(Errno) in try Descriptors.readyEvents(fd, Descriptors.readable) } == .succeeded)
        #expect(outcome { () throws(Errno) in try KernelWatches.fileChanges(of: fd) }.description == "succeeded")
        #expect(withEpollSet { epfd, eventfd in
            outcome { () throws(Errno) in
                try EpollCalls.control(epfd, .add, fd: eventfd, events: Descriptors.readable, data: 1)
                try waitOnce(epfd)
            }
        } == .succeeded)
        #expect(outcome { () throws(Errno) in Descriptors.close(try EpollCalls.makeTimeoutTimer()) } == .succeeded)
    }
}

/// The runtime's answer to each refusal on the manager thread: a warning that names
/// what failed and what it means, and the rest of the runtime goes on. In child
/// processes: the faults hit the manager's next call, which other tests share.
@Suite struct RuntimeFaultReportTests {
    @Test func aRefusedPidfdLeavesAWarningAndTheRuntimeGoesOn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            RuntimeFaultScenarios.refusedManagerCall(.pidfdOpen, .tooManyOpenFiles) { queue in
                let source = DispatchSource.makeProcessSource(identifier: ThreadControl.processID, eventMask: .exit,
                                                              queue: queue)
                source.activate()
                return source
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("pidfd_open failed (EMFILE)") && text.contains("RLIMIT_NOFILE"), "\(text)")
    }

    @Test func aRefusedInotifyLeavesAWarningAndTheRuntimeGoesOn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            RuntimeFaultScenarios.refusedManagerCall(.inotifyWatch, .noSpace) { queue in
                let fd = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
                let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: fd, eventMask: .write,
                                                                       queue: queue)
                source.activate()
                return source
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("inotify refused to watch") && text.contains("ENOSPC"), "\(text)")
    }

    @Test func aRefusedSignalfdLeavesAWarningAndTheRuntimeGoesOn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            RuntimeFaultScenarios.refusedManagerCall(.signalfd, .noMemory) { queue in
                let source = DispatchSource.makeSignalSource(signal: 12, queue: queue)  // SIGUSR2
                source.activate()
                return source
            }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("signalfd refused (ENOMEM)"), "\(text)")
    }

    @Test func aRefusedClockWatchLeavesAWarningAndTimersStillFire() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            RuntimeFaultScenarios.refusedClockWatch()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("timerfd refused (EMFILE)"), "\(text)")
    }

    @Test func aRefusedPoolIsAnErrorNamingTheKey() async {
        await #expect(processExitsWith: .success) {
            SyscallFaults.inject(.reserveMemory, .noMemory)
            do throws(RuntimeError) {
                try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
                Issue.record("the runtime started without its pool")
            } catch {
                guard case .memoryRefused(let key, _, _, _) = error else {
                    Issue.record("unexpected error: \(error)")
                    return
                }
                #expect(key == "workNodes")
                #expect(error.description.contains("'workNodes'"))
            }
        }
    }
}

enum RuntimeFaultScenarios {
    /// Injects the fault into the manager's next `call`, makes the source `make`
    /// returns (which makes that call), waits for the warning, then shows the runtime
    /// still runs work.
    static func refusedManagerCall(_ call: SyscallFaults.Call, _ errno: Errno,
                                   _ make: (DispatchQueue) -> DispatchSourceProtocol) {
        startRuntime(RuntimeConfiguration(cores: 2))
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let warned = StallProbe.install("warning")
        SyscallFaults.inject(call, errno, thread: manager.threadID)
        let source = make(DispatchQueue(label: "test.fault.source"))
        #expect(eventually { warned() }, "no warning for the refused \(call)")
        source.cancel()
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { ran.signal() }
        #expect(waited(ran))
    }

    static func refusedClockWatch() {
        startRuntime(RuntimeConfiguration(cores: 2))
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        let warned = StallProbe.install("warning")
        SyscallFaults.inject(.timerfd, .tooManyOpenFiles, thread: manager.threadID)
        let fired = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(wallDeadline: .now() + .milliseconds(10)) { fired.signal() }
        #expect(eventually { warned() }, "no warning for the refused timerfd")
        #expect(waited(fired), "the wall-clock timer did not fire without its watch")
    }
}
