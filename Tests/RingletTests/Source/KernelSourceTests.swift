import CRinglet
import CRingletTestSupport
import Glibc
import Synchronization
import Testing
@testable import Ringlet

/// The program's own SIGUSR1/SIGUSR2 handler for these tests: it counts.
private let programHandlerCalls = Atomic<Int>(0)

private func installCountingHandler(_ signo: Int32) {
    let handler: @convention(c) (Int32) -> Void = { _ in
        programHandlerCalls.wrappingAdd(1, ordering: .relaxed)
    }
    _ = signal(signo, handler)
}

/// Signal, process and file-system sources.
@Suite(.serialized)
struct KernelSourceTests {
    static let sigusr1: Int32 = 10
    static let sigusr2: Int32 = 12

    @Test func signalDeliveredThreeTimesIsCountedThreeTimesAndTheProgramsHandlerStillRuns() {
        installCountingHandler(Self.sigusr1)
        let before = programHandlerCalls.load(ordering: .relaxed)
        let queue = DispatchQueue(label: "test.signal.three")
        let first = DispatchSource.makeSignalSource(signal: Self.sigusr1, queue: queue)
        let second = DispatchSource.makeSignalSource(signal: Self.sigusr1, queue: queue)
        let firstTotal = AtomicCounter(), secondTotal = AtomicCounter()
        first.setEventHandler { firstTotal.increment(by: Int(first.data)) }
        second.setEventHandler { secondTotal.increment(by: Int(second.data)) }
        let registered = DispatchGroup()
        for source in [first, second] {
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.activate()
        }
        #expect(waited(registered))  // after the manager installed its handler
        for round in 1...3 {
            #expect(rl_signal_send(Self.sigusr1) == 0)
            #expect(eventually { firstTotal.value == round && secondTotal.value == round })
        }
        #expect(programHandlerCalls.load(ordering: .relaxed) - before == 3)
        first.cancel()
        second.cancel()
    }

    @Test func signalPendingForTheManagerReachesItThroughTheSignalfd() {
        installCountingHandler(Self.sigusr2)
        let before = programHandlerCalls.load(ordering: .relaxed)
        let source = DispatchSource.makeSignalSource(signal: Self.sigusr2,
                                                     queue: DispatchQueue(label: "test.signal.fd"))
        let total = AtomicCounter()
        source.setEventHandler { total.increment(by: Int(source.data)) }
        let registered = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.activate()
        #expect(waited(registered))
        // The manager blocks every asynchronous signal: a signal sent to it stays
        // pending, where only its signalfd sees it.
        let manager = RuntimeParts.shared.manager.takeUnretainedValue()
        for round in 1...3 {
            #expect(rl_signal_send_thread(manager.threadID, Self.sigusr2) == 0)
            #expect(eventually { total.value == round })
        }
        // The program's handler is called for signals read from the signalfd too.
        #expect(programHandlerCalls.load(ordering: .relaxed) - before == 3)
        source.cancel()
    }

    @Test func childExitReachesAProcessSource() {
        let pid = rl_process_spawn_exit(3, 30_000_000)
        #expect(pid > 0)
        let queue = DispatchQueue(label: "test.process")
        let source = DispatchSource.makeProcessSource(identifier: pid, eventMask: .exit, queue: queue)
        let seen = Recorder<DispatchSource.ProcessEvent>()
        source.setEventHandler { seen.append(source.data) }
        source.activate()
        #expect(eventually { seen.count == 1 })
        #expect(seen.values == [.exit])
        #expect(source.handle == pid)
        #expect(rl_process_reap(pid) == 3)
        settle(queue)
        #expect(seen.count == 1)  // an exit comes once
        source.cancel()
    }

    @Test func writeToAFileReachesAFileSystemSource() throws {
        let path = "/tmp/ringlet-fs-\(rl_process_id())-\(monotonicNanoseconds)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: fd, eventMask: [.write, .extend, .delete],
                                                               queue: DispatchQueue(label: "test.fs"))
        let seen = Recorder<DispatchSource.FileSystemEvent>()
        let cancelled = DispatchSemaphore(value: 0)
        source.setEventHandler { seen.append(source.data) }
        source.setCancelHandler {
            rl_close(fd)
            cancelled.signal()
        }
        let registered = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.activate()
        #expect(waited(registered))
        let bytes: [UInt8] = [1, 2, 3]
        #expect(bytes.withUnsafeBytes { rl_fd_write(fd, $0.baseAddress, 3) } == 3)
        #expect(eventually { seen.values.contains { $0.contains(.write) } })
        #expect(seen.values.contains { $0.contains(.extend) })
        _ = unlink(path)
        #expect(eventually { seen.values.contains { $0.contains(.delete) } })
        source.cancel()
        #expect(waited(cancelled))
    }
}
