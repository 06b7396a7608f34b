// The epoll backend's emulation of io_uring's requests, on a real kernel and without
// the runtime (Architecture, "The epoll backend"): what io_uring does inside the
// kernel — several polls on one descriptor, a multishot poll that reports wake-ups and
// not readiness, a read that waits for its pipe, a file that cannot be polled, the I/O
// helper threads — shown on the `Ring` the manager holds. RingTests has the requests
// both backends answer alike.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite(.serialized) struct EpollRingTests {
    private let pollIn = Int32(bitPattern: Descriptors.readable)
    private let pollOut = Int32(bitPattern: Descriptors.writable)

    /// A regular file the test removes afterwards.
    private func temporaryFile(_ bytes: Int = 0) -> Int32 {
        let path = "/tmp/ringlet-epoll-\(rl_process_id())-\(monotonicNanoseconds)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0)
        _ = unlink(path)
        if bytes > 0 {
            let pattern = [UInt8](repeating: 5, count: bytes)
            precondition(pattern.withUnsafeBytes { rl_fd_write(fd, $0.baseAddress, UInt64(bytes)) } == bytes)
        }
        return fd
    }

    @Test func aPollOnAFileThatCannotBePolledIsReadyAtOnceAndEnds() throws {
        let ring = try makeRing(.epoll)
        let fd = temporaryFile()
        defer { close(fd) }
        try ring.preparePoll(fd: fd, events: Descriptors.readable, multishot: true, userData: 1)
        _ = try ring.submitAndWait(waitFor: 1)
        // As io_uring answers a file without ->poll: ready, and no more completions.
        #expect(drain(ring) == [Ring.Completion(userData: 1, result: pollIn, flags: 0)])
    }

    @Test func twoPollsOnOneDescriptorAreEachServed() throws {
        let ring = try makeRing(.epoll)
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        try ring.preparePoll(fd: pair[0], events: Descriptors.readable, multishot: true, userData: 1)
        try ring.preparePoll(fd: pair[0], events: Descriptors.writable, multishot: false, userData: 2)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 2, result: pollOut, flags: 0)])  // room to write
        #expect(rl_fd_write(pair[1], "x", 1) == 1)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 1, result: pollIn, flags: RL_CQE_F_MORE)])
    }

    /// io_uring's multishot poll completes when the pipe is woken, not while it stays
    /// readable: a read source whose handler has not run yet must not spin the manager.
    @Test func aMultishotPollReportsEachWakeUpNotTheReadinessThatStays() throws {
        let ring = try makeRing(.epoll)
        let pipe = TestPipe()
        defer { close(pipe.readEnd); close(pipe.writeEnd) }
        try ring.preparePoll(fd: pipe.readEnd, events: Descriptors.readable, multishot: true, userData: 9)
        _ = try ring.submitAndWait(waitFor: 0)
        #expect(drain(ring).isEmpty)
        pipe.write(1)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 9, result: pollIn, flags: RL_CQE_F_MORE)])
        _ = try ring.submitAndWait(waitFor: 0)
        #expect(drain(ring).isEmpty, "reported again while nothing new arrived")
        pipe.write(1)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring).map(\.userData) == [9])
    }

    @Test func aReadOfAnEmptyPipeWaitsForItsBytes() throws {
        let ring = try makeRing(.epoll)
        let pipe = TestPipe()
        defer { close(pipe.readEnd); close(pipe.writeEnd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        defer { buffer.deallocate() }
        try ring.prepareTransfer(write: false, fd: pipe.readEnd, buffer: buffer.baseAddress!, length: 64, offset: nil,
                                 ioprio: 0, userData: 4)
        _ = try ring.submitAndWait(waitFor: 0)
        #expect(drain(ring).isEmpty, "a read of an empty pipe completed")
        pipe.write(3)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 4, result: 3, flags: 0)])
        #expect(Array(buffer.prefix(3)) == [7, 7, 7])
    }

    @Test func aWaitingReadIsCancelledAndAPollRemoved() throws {
        let ring = try makeRing(.epoll)
        let pipe = TestPipe()
        defer { close(pipe.readEnd); close(pipe.writeEnd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 8)
        defer { buffer.deallocate() }
        try ring.prepareTransfer(write: false, fd: pipe.readEnd, buffer: buffer.baseAddress!, length: 8, offset: nil,
                                 ioprio: 0, userData: 1)
        try ring.preparePoll(fd: pipe.readEnd, events: Descriptors.readable, multishot: true, userData: 2)
        _ = try ring.submitAndWait(waitFor: 0)
        try ring.prepareCancel(target: 1, userData: 3)
        try ring.preparePollRemove(target: 2, userData: 4)
        try ring.preparePollRemove(target: 2, userData: 5)  // gone already
        _ = try ring.submitAndWait(waitFor: 1)
        let cancelled = -Errno.cancelled.rawValue
        #expect(drain(ring) == [Ring.Completion(userData: 1, result: cancelled, flags: 0),
                                Ring.Completion(userData: 3, result: 0, flags: 0),
                                Ring.Completion(userData: 2, result: cancelled, flags: 0),
                                Ring.Completion(userData: 4, result: 0, flags: 0),
                                Ring.Completion(userData: 5, result: -Errno.noSuchFile.rawValue, flags: 0)])
        pipe.write(1)
        _ = try ring.submitAndWait(waitFor: 0)
        #expect(drain(ring).isEmpty, "a cancelled read or removed poll completed")
    }

    /// A one-shot poll served leaves its descriptor in the set until the next wait; if
    /// the program closes it meanwhile and gets the same number for a new pipe, a poll
    /// on the new pipe must reach the kernel (the closed file left the set with it).
    @Test func aPollOnAReusedDescriptorNumberIsServed() throws {
        let ring = try makeRing(.epoll)
        let first = TestPipe()
        try ring.preparePoll(fd: first.readEnd, events: Descriptors.readable, multishot: false, userData: 1)
        first.write(1)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring).map(\.userData) == [1])
        // dup2 closes the first pipe's read end and gives its number to the second
        // pipe in one step (no other test's descriptor can take the number between).
        let second = TestPipe()
        let reused = first.readEnd
        #expect(dup2(second.readEnd, reused) == reused)
        close(second.readEnd)
        close(first.writeEnd)
        defer { close(reused); close(second.writeEnd) }
        try ring.preparePoll(fd: reused, events: Descriptors.readable, multishot: false, userData: 2)
        _ = try ring.submitAndWait(waitFor: 0)
        #expect(drain(ring).isEmpty, "an empty pipe was reported readable")
        second.write(1)
        _ = try ring.submitAndWait(waitFor: 0)
        #expect(drain(ring).map(\.userData) == [2], "the new pipe's poll never reached the epoll set")
    }

    @Test func aRegularFileIsWrittenAndReadAtOffsets() throws {
        let ring = try makeRing(.epoll)
        let fd = temporaryFile()
        defer { close(fd) }
        let count = 256 * 1024
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 8)
        let back = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 8)
        defer { out.deallocate(); back.deallocate() }
        for index in 0..<count { out[index] = UInt8(truncatingIfNeeded: index &* 31) }
        try ring.prepareTransfer(write: true, fd: fd, buffer: out.baseAddress!, length: count, offset: 4096,
                                 ioprio: 0, userData: 1)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 1, result: Int32(count), flags: 0)])
        try ring.prepareTransfer(write: false, fd: fd, buffer: back.baseAddress!, length: count, offset: 4096,
                                 ioprio: 0, userData: 2)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 2, result: Int32(count), flags: 0)])
        #expect(out.elementsEqual(back))
        #expect(lseek(fd, 0, SEEK_CUR) == 0, "an explicit offset moved the file position")
    }

    /// A terminal cannot promise RWF_NOWAIT: the write waits for room, then an I/O
    /// helper thread makes it (it may block there, never on the manager).
    @Test func aWriteToATerminalGoesToAHelperThread() throws {
        var master: Int32 = -1, slave: Int32 = -1
        try #require(rl_pty_open(&master, &slave) == 0, "no pseudo-terminal here")
        defer { close(master); close(slave) }
        var byte: UInt8 = 0
        let probe = withUnsafeMutableBytes(of: &byte) { raw in
            Result { () throws(Errno) in try EpollCalls.transferNow(write: true, fd: master, buffer: raw.baseAddress!,
                                                                     length: 1, offset: nil) }
        }
        try #require(probe.failure == Errno.notSupported, "this kernel's terminals take RWF_NOWAIT: nothing to show")
        let ring = try makeRing(.epoll)
        let text: [UInt8] = Array("hello\n".utf8)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: text.count, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: text)
        try ring.prepareTransfer(write: true, fd: master, buffer: buffer.baseAddress!, length: text.count, offset: nil,
                                 ioprio: 0, userData: 7)
        _ = try ring.submitAndWait(waitFor: 1)
        #expect(drain(ring) == [Ring.Completion(userData: 7, result: Int32(text.count), flags: 0)])
    }

    @Test func timeoutsCompleteInDeadlineOrderAndNeverEarly() throws {
        let ring = try makeRing(.epoll)
        let start = MonotonicClock.nanoseconds
        let late = start + 30_000_000, early = start + 10_000_000
        try ring.prepareTimeout(deadline: late, userData: 2)
        try ring.prepareTimeout(deadline: early, userData: 1)
        var seen: [(UInt64, UInt64)] = []
        while seen.count < 2 {
            _ = try ring.submitAndWait(waitFor: 1)
            let now = MonotonicClock.nanoseconds
            for completion in drain(ring) {
                #expect(completion.result == -Errno.timeExpired.rawValue)
                seen.append((completion.userData, now))
            }
        }
        #expect(seen.map(\.0) == [1, 2])
        #expect(seen[0].1 >= early && seen[1].1 >= late)
    }
}

/// The helpers themselves: a queued job can be cancelled, a running one cannot.
@Suite struct IOHelperThreadsTests {
    @Test func aQueuedJobIsCancelledAndARunningOneFinishes() throws {
        let helpers = try IOHelperThreads(count: 1)
        defer { helpers.stop() }
        var fds: [Int32] = [-1, -1]
        #expect(fds.withUnsafeMutableBufferPointer { rl_pipe($0.baseAddress, 0) } == 0)  // blocking
        defer { close(fds[0]); close(fds[1]) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
        defer { buffer.deallocate() }
        func job(_ userData: UInt64) -> IOHelperThreads.Job {
            IOHelperThreads.Job(userData: userData, write: false, fd: fds[0], buffer: buffer, length: 16, offset: nil,
                                ioprio: 0)
        }
        helpers.submit([job(1)])
        #expect(eventually { helpers.busy == 1 }, "the helper never took the job")
        #expect(helpers.cancel(1) == .running)
        helpers.submit([job(2)])
        #expect(helpers.cancel(2) == .cancelled)
        #expect(helpers.cancel(3) == .notFound)
        #expect(rl_fd_write(fds[1], "ab", 2) == 2)
        var finished: [Ring.Completion] = []
        #expect(eventually {
            finished += helpers.takeFinished()
            return !finished.isEmpty
        })
        #expect(finished == [Ring.Completion(userData: 1, result: 2, flags: 0)])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
