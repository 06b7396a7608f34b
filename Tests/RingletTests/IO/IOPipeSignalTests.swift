import CRinglet
import Glibc
import Testing
@testable import Ringlet

/// A DispatchIO write to a pipe or socket whose reader has gone fails with EPIPE and
/// hands back the unwritten data, instead of SIGPIPE ending the process from the
/// manager thread that issued it; the program's own writes keep the program's
/// SIGPIPE disposition. In child processes: the failure mode is a dead process.
@Suite struct IOPipeSignalTests {
    @Test func aWriteToAPipeWithoutReaderFailsWithEPIPE() async {
        await #expect(processExitsWith: .success) { IOPipeSignalScenarios.brokenPipeWrites() }
    }

    /// Ringlet keeps SIGPIPE off its manager thread only: the program's own write to
    /// a broken pipe still meets the program's disposition (here: the default, death).
    @Test func theProgramsOwnSIGPIPEIsUnchanged() async {
        await #expect(processExitsWith: .signal(SIGPIPE)) { IOPipeSignalScenarios.programsOwnBrokenPipe() }
    }

    @Test func theProgramsSIGPIPEHandlerStillRunsForItsOwnWrites() async {
        await #expect(processExitsWith: .success) { IOPipeSignalScenarios.programsOwnHandler() }
    }
}

enum IOPipeSignalScenarios {
    static func write(_ channel: DispatchIO, offset: Int, count: Int, queue: DispatchQueue) -> IOTranscript {
        IOReliabilityScenarios.write(channel, offset: offset, count: count, queue: queue)
    }

    /// Whether SIGPIPE waits for the process or the caller.
    static var pipeSignalPending: Bool {
        var set = sigset_t()
        sigpending(&set)
        return sigismember(&set, SIGPIPE) == 1
    }

    /// Whether SIGPIPE waits for the manager thread alone (where Ringlet blocks it):
    /// the "SigPnd" mask of its /proc status.
    static var managerHoldsPipeSignal: Bool {
        let tid = RuntimeParts.shared.manager.takeUnretainedValue().threadID
        let fd = open("/proc/self/task/\(tid)/status", O_RDONLY)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        let text = String(decoding: buffer[0..<Swift.max(n, 0)], as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("SigPnd:") }),
              let mask = UInt64(line.dropFirst("SigPnd:".count).trimmingPrefix { $0 == " " || $0 == "\t" }, radix: 16)
        else { return false }
        return mask & (1 << UInt64(SIGPIPE - 1)) != 0
    }

    static func brokenPipeWrites() {
        let queue = DispatchQueue(label: "test.io.epipe")
        // The reader closed before the write.
        let gone = blockingPipe()
        Glibc.close(gone.read)
        let early = DispatchIO(type: .stream, fileDescriptor: gone.write, queue: queue) { _ in }
        let refused = write(early, offset: 0, count: 100, queue: queue)
        #expect(refused.finalError == EPIPE)
        #expect(refused.all.last?.count == 100)  // the unwritten data comes back
        early.close()
        Glibc.close(gone.write)
        // The reader goes while a write waits for room in the pipe.
        let full = blockingPipe()
        let late = DispatchIO(type: .stream, fileDescriptor: full.write, queue: queue) { _ in }
        let pending = IOTranscript()
        patternBytes(1 << 20).withUnsafeBytes {
            late.write(offset: 0, data: DispatchData(bytes: $0), queue: queue, ioHandler: pending.handler)
        }
        #expect(eventually { rl_fd_readable_bytes(full.read) > 0 })
        Glibc.close(full.read)
        #expect(pending.waitDone())
        #expect(pending.finalError == EPIPE)
        #expect(pending.all.last.map { $0.count > 0 && $0.count < 1 << 20 } == true)
        late.close()
        Glibc.close(full.write)
        // A socket whose peer is gone.
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        Glibc.close(fds[1])
        let socket = DispatchIO(type: .stream, fileDescriptor: fds[0], queue: queue) { _ in }
        #expect(write(socket, offset: 0, count: 100, queue: queue).finalError == EPIPE)
        socket.close()
        Glibc.close(fds[0])
        // The runtime's SIGPIPEs were taken, not left pending for someone to trip on.
        #expect(!pipeSignalPending)
        #expect(!managerHoldsPipeSignal)
    }

    static func programsOwnBrokenPipe() {
        let pipe = blockingPipe()
        Glibc.close(pipe.read)
        let queue = DispatchQueue(label: "test.io.own-epipe")
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.write, queue: queue) { _ in }
        #expect(write(channel, offset: 0, count: 10, queue: queue).finalError == EPIPE)
        // The program's own write: SIGPIPE's default action ends the process.
        _ = [UInt8](repeating: 1, count: 10).withUnsafeBytes { Glibc.write(pipe.write, $0.baseAddress, 10) }
    }

    static func programsOwnHandler() {
        signal(SIGPIPE) { _ in countPipeSignal() }
        let pipe = blockingPipe()
        Glibc.close(pipe.read)
        let queue = DispatchQueue(label: "test.io.own-handler")
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.write, queue: queue) { _ in }
        #expect(write(channel, offset: 0, count: 10, queue: queue).finalError == EPIPE)
        #expect(pipeSignals.value == 0)  // the runtime's own write raised none for the program
        let r = [UInt8](repeating: 1, count: 10).withUnsafeBytes { Glibc.write(pipe.write, $0.baseAddress, 10) }
        #expect(r == -1 && errno == EPIPE)
        #expect(pipeSignals.value == 1)  // the program's write reached its handler
        channel.close()
    }
}

/// SIGPIPEs the program's handler saw (programsOwnHandler).
let pipeSignals = AtomicCounter()

private func countPipeSignal() { _ = pipeSignals.increment() }
