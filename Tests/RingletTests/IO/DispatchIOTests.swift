import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

/// DispatchIO on the manager's ring: round trips, streams, stop, errors.
@Suite struct DispatchIOTests {
    /// Writes `count` pattern bytes through a channel, then reads them back through another.
    private func roundTrip(_ count: Int, highWater: Int? = nil, type: DispatchIO.StreamType) {
        let file = TestFile(count: 0)
        defer { file.remove() }
        let queue = DispatchQueue(label: "test.io.roundtrip.\(count)")
        let writer = DispatchIO(type: type, fileDescriptor: file.open(O_WRONLY), queue: queue) { _ in }
        let source = patternBytes(count)
        let wrote = IOTranscript()
        source.withUnsafeBytes { writer.write(offset: 0, data: DispatchData(bytes: $0), queue: queue,
                                              ioHandler: wrote.handler) }
        #expect(wrote.waitDone())
        #expect(wrote.all.count == 1 && wrote.finalError == 0 && wrote.all.first?.count == -1)
        let closed = DispatchSemaphore(value: 0)
        writer.close()
        writer.barrier {}
        let reader = DispatchIO(type: type, fileDescriptor: file.open(), queue: queue) { _ in closed.signal() }
        if let highWater { reader.setLimit(highWater: highWater) }
        let read = IOTranscript()
        reader.read(offset: 0, length: Int.max, queue: queue, ioHandler: read.handler)
        #expect(read.waitDone())
        #expect(read.doneCalls == 1)
        #expect(read.finalError == 0)
        #expect(read.data.count == count)
        #expect(read.data == source)
        if let highWater { #expect(read.all.allSatisfy { $0.count <= highWater }) }
        #expect(read.all.last?.done == true)
        reader.close()
        #expect(waited(closed))
        #expect(file.contents() == source)
    }

    @Test(arguments: [0, 1, 4096, 256 * 1024 + 123, 3 * 1024 * 1024 + 7])
    func randomChannelRoundTrips(count: Int) { roundTrip(count, type: .random) }

    @Test(arguments: [0, 1, 256 * 1024 + 123])
    func streamChannelRoundTrips(count: Int) { roundTrip(count, type: .stream) }

    @Test func readsLargerThanTheHighWaterComeInPieces() {
        roundTrip(1024 * 1024 + 5, highWater: 64 * 1024, type: .random)
    }

    @Test func randomReadsAtOffsetsReturnThoseBytes() {
        let file = TestFile(count: 1 << 20)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.offsets", attributes: .concurrent)
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let offsets = [0, 4095, 700_000, (1 << 20) - 10, 12_345]
        let transcripts = offsets.map { _ in IOTranscript() }
        for (offset, transcript) in zip(offsets, transcripts) {
            channel.read(offset: offset, length: 5000, queue: queue, ioHandler: transcript.handler)
        }
        for (offset, transcript) in zip(offsets, transcripts) {
            #expect(transcript.waitDone())
            #expect(transcript.finalError == 0)
            let expected = Swift.min(5000, (1 << 20) - offset)
            #expect(transcript.data == patternBytes(expected, from: offset))
            #expect(!transcript.overlapped)
        }
        channel.close()
    }

    @Test func readPastTheEndEndsWithEmptyData() {
        let file = TestFile(count: 100)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.eof")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let transcript = IOTranscript()
        channel.read(offset: 200, length: 50, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        #expect(transcript.all.count == 1)
        #expect(transcript.all.first?.done == true && transcript.all.first?.count == 0)
        #expect(transcript.finalError == 0)
        channel.close()
    }

    @Test func streamReadFromAPipeWithADelayedWriter() {
        let pipe = blockingPipe()
        let queue = DispatchQueue(label: "test.io.pipe")
        let cleaned = DispatchSemaphore(value: 0)
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { error in
            #expect(error == 0)
            Glibc.close(pipe.read)
            cleaned.signal()
        }
        let transcript = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        // The writer writes one piece at a time, each once the reader has the one before.
        writeAll(pipe.write, patternBytes(10))
        #expect(eventually { transcript.data.count == 10 })
        #expect(transcript.doneCalls == 0)  // the writer has more to say
        let rest = patternBytes(70_000, from: 10)
        DispatchQueue.global().async { writeAll(pipe.write, rest) }
        #expect(eventually { transcript.data.count == 70_010 })
        #expect(transcript.doneCalls == 0)
        writeAll(pipe.write, patternBytes(3, from: 70_010))
        Glibc.close(pipe.write)
        #expect(transcript.waitDone())
        #expect(transcript.finalError == 0)
        #expect(transcript.data == patternBytes(70_013))
        #expect(transcript.all.filter { !$0.done }.count >= 2)  // partial data as it arrived
        channel.close()
        #expect(waited(cleaned))
    }

    @Test func nonBlockingPipeIsReadThroughReadiness() {
        var fds: [Int32] = [-1, -1]
        _ = fds.withUnsafeMutableBufferPointer { rl_pipe($0.baseAddress, 1) }
        let queue = DispatchQueue(label: "test.io.nonblocking")
        let channel = DispatchIO(type: .stream, fileDescriptor: fds[0], queue: queue) { _ in Glibc.close(fds[0]) }
        let transcript = IOTranscript()
        channel.read(offset: 0, length: 5, queue: queue, ioHandler: transcript.handler)
        settle(queue)  // the read is issued and waits for readiness before any byte comes
        writeAll(fds[1], patternBytes(5))
        #expect(transcript.waitDone())
        #expect(transcript.finalError == 0)
        #expect(transcript.data == patternBytes(5))
        Glibc.close(fds[1])
        channel.close()
    }

    @Test func stopDuringALargeReadCancelsIt() {
        let pipe = blockingPipe()
        let queue = DispatchQueue(label: "test.io.stop")
        let cleaned = DispatchSemaphore(value: 0)
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in cleaned.signal() }
        let transcript = IOTranscript()
        channel.read(offset: 0, length: 1 << 30, queue: queue, ioHandler: transcript.handler)
        writeAll(pipe.write, patternBytes(1000))
        #expect(eventually { transcript.data.count == 1000 })
        channel.close(flags: .stop)
        #expect(transcript.waitDone())
        #expect(transcript.finalError == Errno.cancelled.rawValue)
        #expect(transcript.doneCalls == 1)
        #expect(waited(cleaned))
        // Later operations are refused at once.
        let late = IOTranscript()
        channel.read(offset: 0, length: 10, queue: queue, ioHandler: late.handler)
        #expect(late.waitDone())
        #expect(late.finalError == Errno.cancelled.rawValue)
        Glibc.close(pipe.read)
        Glibc.close(pipe.write)
    }

    @Test func readingAClosedDescriptorFailsWithEBADF() {
        // A number above the open-files limit: never open, whatever the tests running in
        // parallel open meanwhile (a number just closed may be reused at once).
        let fd = Int32(clamping: Int(getdtablesize()) + 16)
        let queue = DispatchQueue(label: "test.io.closed")
        let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in }
        let transcript = IOTranscript()
        channel.read(offset: 0, length: 10, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        #expect(transcript.finalError == EBADF)
        channel.close()
    }

    @Test func aPathThatDoesNotExistReportsThroughTheCleanupHandler() {
        let queue = DispatchQueue(label: "test.io.nopath")
        let reported = Recorder<Int32>()
        let channel = DispatchIO(type: .stream, path: "/nonexistent-ringlet/file", oflag: O_RDONLY, mode: 0,
                                 queue: queue) { error in reported.append(error) }
        #expect(channel != nil)
        #expect(eventually { reported.count == 1 })
        #expect(reported.values == [ENOENT])
        let transcript = IOTranscript()
        channel?.read(offset: 0, length: 10, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        #expect(transcript.finalError == ENOENT)
        channel?.close()
        settle(queue)
        #expect(reported.count == 1)  // once
    }

    @Test func aRelativePathIsRefused() {
        let channel = DispatchIO(type: .stream, path: "relative/file", oflag: O_RDONLY, mode: 0,
                                 queue: DispatchQueue(label: "test.io.relative")) { _ in }
        #expect(channel == nil)
    }

    @Test func aPathChannelOpensReadsAndClosesTheFile() {
        let file = TestFile(count: 5000)
        defer { file.remove() }
        let queue = DispatchQueue(label: "test.io.path")
        let cleaned = DispatchSemaphore(value: 0)
        guard let channel = DispatchIO(type: .random, path: file.path, oflag: O_RDONLY, mode: 0, queue: queue,
                                       cleanupHandler: { error in #expect(error == 0); cleaned.signal() }) else {
            Issue.record("the channel refused an absolute path")
            return
        }
        let fd = channel.fileDescriptor
        let opened = Descriptors.identity(fd)
        #expect(opened != nil)
        let transcript = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        #expect(transcript.data == patternBytes(5000))
        channel.close()
        #expect(waited(cleaned))
        // The channel closed what it opened: the number no longer names the file (it
        // may already name another test's file: tests run in parallel).
        #expect(eventually { Descriptors.identity(fd).map { $0 != opened! } ?? true })
    }
}

extension DispatchIOTests {
    @Test func negativeOffsetsAndLengthsFailWithEINVAL() {
        let file = TestFile(count: 10)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.einval")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let badOffset = IOTranscript(), badLength = IOTranscript(), badWrite = IOTranscript()
        channel.read(offset: -1, length: 5, queue: queue, ioHandler: badOffset.handler)
        channel.read(offset: 0, length: -5, queue: queue, ioHandler: badLength.handler)
        channel.write(offset: -4, data: .empty, queue: queue, ioHandler: badWrite.handler)
        for transcript in [badOffset, badLength, badWrite] {
            #expect(transcript.waitDone())
            #expect(transcript.finalError == EINVAL)
        }
        channel.close()
    }
}
