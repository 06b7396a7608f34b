// A descriptor closed, or replaced with dup2(2), under a pending DispatchIO read or an
// armed read source, on a file that stays quiet: no bytes ever come to show it, so
// the descriptor watch looks every `descriptorCheckMilliseconds`. The read ends with
// EBADF and the source is cancelled, each with a warning; the ring lets go of the old
// file, so a socket's peer sees it closed. Runs on whichever backend the suite runs
// on (make test runs both).

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct DescriptorReplacedTests {
    @Test func aPendingReadWhoseDescriptorIsClosedEndsWithEBADF() async {
        await #expect(processExitsWith: .success) { DescriptorReplacedScenarios.pendingRead(replace: false) }
    }

    @Test func aPendingReadWhoseDescriptorIsReplacedWithDup2EndsWithEBADF() async {
        await #expect(processExitsWith: .success) { DescriptorReplacedScenarios.pendingRead(replace: true) }
    }

    @Test func aPendingWriteToAFullPipeWhoseDescriptorIsClosedEndsWithEBADF() async {
        await #expect(processExitsWith: .success) { DescriptorReplacedScenarios.pendingWrite() }
    }

    @Test func aReadSourceWhoseDescriptorIsClosedIsCancelled() async {
        await #expect(processExitsWith: .success) { DescriptorReplacedScenarios.readSource() }
    }

    /// The pending read no longer holds the closed socket: its peer reads EOF.
    @Test func theClosedSocketIsLetGo() async {
        await #expect(processExitsWith: .success) { DescriptorReplacedScenarios.socketLetGo() }
    }
}

enum DescriptorReplacedScenarios {
    /// Starts the runtime with a 50 ms watch; answers whether a warning with `marker`
    /// came.
    static func start(warning marker: String = "was closed (or now names another file)") -> () -> Bool {
        var configuration = twoCoreConfiguration()
        configuration.descriptorCheckMilliseconds = 50
        startRuntime(configuration)
        return StallProbe.install(marker)
    }

    /// DispatchIO requests in flight (reads or writes).
    static var requestsInFlight: Int {
        RuntimeParts.shared.manager.takeUnretainedValue().ioEngineIfMade?.counters.inFlight ?? 0
    }

    /// A read of a quiet pipe, then its descriptor closed (or another pipe's read end
    /// put in its place): the read ends with EBADF and nothing from the other pipe.
    static func pendingRead(replace: Bool) {
        let warned = start()
        let pipe = TestPipe()
        let outcome = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        DispatchIO.read(fromFileDescriptor: pipe.readEnd, maxLength: 64,
                        runningHandlerOn: DispatchQueue(label: "test.replaced.read")) { data, error in
            outcome.append("\(data.count) bytes, error \(error)")
            done.signal()
        }
        guard eventually({ requestsInFlight == 1 }) else { return }
        if replace {
            let other = TestPipe()
            other.write(8)  // what the read must never deliver
            #expect(dup2(other.readEnd, pipe.readEnd) == pipe.readEnd)
        } else {
            rl_close(pipe.readEnd)
        }
        #expect(waited(done))
        #expect(outcome.values == ["0 bytes, error \(Errno.badFile.rawValue)"])
        #expect(warned())
    }

    /// A write to a pipe nobody reads, full: it waits; its descriptor is closed.
    static func pendingWrite() {
        let warned = start()
        let pipe = TestPipe()
        // Fill the pipe (its write end does not block: the test pipe is O_NONBLOCK).
        let chunk = [UInt8](repeating: 1, count: 4096)
        while chunk.withUnsafeBytes({ rl_fd_write(pipe.writeEnd, $0.baseAddress, 4096) }) > 0 {}
        let outcome = Recorder<Int32>()
        let done = DispatchSemaphore(value: 0)
        let data = chunk.withUnsafeBytes { DispatchData(bytes: $0) }
        DispatchIO.write(toFileDescriptor: pipe.writeEnd, data: data,
                         runningHandlerOn: DispatchQueue(label: "test.replaced.write")) { _, error in
            outcome.append(error)
            done.signal()
        }
        guard eventually({ requestsInFlight == 1 }) else { return }
        rl_close(pipe.writeEnd)
        #expect(waited(done))
        #expect(outcome.values == [Errno.badFile.rawValue])
        #expect(warned())
    }

    /// The source is cancelled with a warning whichever way the manager learns of the
    /// close: the watch's look, or — when the close comes before the source's first
    /// poll reached the kernel — the poll's EBADF. Each warning says it cancels.
    static func readSource() {
        let warned = start(warning: "cancelling the source")
        let pipe = TestPipe()
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd,
                                                   queue: DispatchQueue(label: "test.replaced.source"))
        let events = AtomicCounter()
        let cancelled = DispatchSemaphore(value: 0)
        let registered = DispatchSemaphore(value: 0)
        source.setEventHandler { events.increment() }
        source.setCancelHandler { cancelled.signal() }
        source.setRegistrationHandler { registered.signal() }
        source.activate()
        guard waited(registered) else { return }
        rl_close(pipe.readEnd)
        #expect(waited(cancelled))
        #expect(events.value == 0)
        #expect(warned())
    }

    static func socketLetGo() {
        let warned = start()
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            Issue.record("socketpair failed")
            return
        }
        let (reading, peer) = (fds[0], fds[1])
        let done = DispatchSemaphore(value: 0)
        DispatchIO.read(fromFileDescriptor: reading, maxLength: 64,
                        runningHandlerOn: DispatchQueue(label: "test.replaced.socket")) { _, _ in done.signal() }
        guard eventually({ requestsInFlight == 1 }) else { return }
        rl_close(reading)
        #expect(waited(done))
        #expect(warned())
        // With the request gone, nothing holds the socket: the peer reads the end.
        var byte: UInt8 = 0
        #expect(eventually { recv(peer, &byte, 1, Int32(MSG_DONTWAIT)) == 0 })
        rl_close(peer)
    }
}
