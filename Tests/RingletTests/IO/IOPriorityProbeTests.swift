// A request carrying an I/O priority that the kernel answers EINVAL or EPERM is issued
// again without it; only when that one goes through were priorities what it refused.
// A file's own EINVAL (an eventfd read of 4 bytes, which needs 8) fails its operation
// and leaves I/O priorities on for everything else, with no warning.

import CRinglet
import Glibc
import Testing
@testable import Ringlet

@Suite struct IOPriorityProbeTests {
    @Test(.enabled(if: RingAvailability.works, "io_uring is refused here"))
    func aFilesOwnEINVALKeepsPrioritiesOnIoUring() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            IOPriorityProbeScenarios.shortEventfdRead(RuntimeConfiguration(cores: 2, backend: .ioUring))
        }
        let text = result?.standardErrorText ?? ""
        #expect(!text.contains("refused I/O priorities"), "\(text)")
    }

    /// The kernel refuses the priority (an EINVAL made up for the read's first request):
    /// the request without it goes through, the read gets all its bytes, and priorities
    /// go off with one warning.
    @Test func aRefusedPriorityIsDroppedWithOneWarning() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            IOPriorityProbeScenarios.refusedPriority()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.components(separatedBy: "the kernel refused I/O priorities").count == 2, "\(text)")
        #expect(text.contains("went through without one"), "\(text)")
    }

    @Test func aFilesOwnEINVALKeepsPrioritiesOnEpoll() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            IOPriorityProbeScenarios.shortEventfdRead(RuntimeConfiguration(cores: 2, backend: .epoll))
        }
        let text = result?.standardErrorText ?? ""
        #expect(!text.contains("refused I/O priorities"), "\(text)")
    }
}

enum IOPriorityProbeScenarios {
    static func refusedPriority() {
        startRuntime(RuntimeConfiguration(cores: 2, ioChunkBytes: 64 * 1024))
        let file = TestFile(count: 256 << 10)
        defer { file.remove() }
        SyscallFaults.inject(.requestCompletion, .invalidArgument, count: 1, thread: IOBoundsScenarios.managerThread)
        let transcript = IOBoundsScenarios.readAll(file)
        SyscallFaults.reset(thread: IOBoundsScenarios.managerThread)
        #expect(transcript.finalError == 0)
        #expect(transcript.data == patternBytes(256 << 10))
        let refused = onManager { RuntimeParts.shared.manager.takeUnretainedValue().ioEngineIfMade?.ioprioRefused }
        #expect(refused == .some(.some(true)))
        // Later reads go without priorities, and say nothing more.
        #expect(IOBoundsScenarios.readAll(file).data == patternBytes(256 << 10))
    }

    static func shortEventfdRead(_ configuration: RuntimeConfiguration) {
        startRuntime(configuration)
        let fd = rl_eventfd_create()
        guard fd >= 0, rl_eventfd_signal(fd) == 0 else { Issue.record("eventfd: \(fd)"); return }
        let queue = DispatchQueue(label: "test.ioprio.eventfd", qos: .utility)
        let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in close(fd) }
        let error = AtomicCounter()
        let ended = DispatchSemaphore(value: 0)
        channel.read(offset: 0, length: 4, queue: queue) { done, _, failure in
            if done {
                error.increment(by: Int(failure))
                ended.signal()
            }
        }
        #expect(waited(ended))
        #expect(error.value == Int(EINVAL), "the read ended with errno \(error.value)")
        channel.close()
        let refused = onManager { RuntimeParts.shared.manager.takeUnretainedValue().ioEngineIfMade?.ioprioRefused }
        #expect(refused == .some(.some(false)), "I/O priorities went off: \(String(describing: refused))")
    }
}
