import CRinglet
import Glibc
import Testing
@testable import Ringlet

/// DispatchIO input that used to crash or stall the whole process: offsets and lengths
/// at the edge of Int, low waters the buffer budget cannot meet. Each runs in a child
/// process, so a regression fails the test instead of ending or hanging the suite.
@Suite struct IOReliabilityScenarioTests {
    @Test func offsetsAndLengthsThatOverflowFailWithEINVAL() async {
        await #expect(processExitsWith: .success) { IOReliabilityScenarios.overflowingOffsets() }
    }

    @Test func aLowWaterAboveTheBudgetIsClampedWithAWarning() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            IOReliabilityScenarios.lowWaterAboveBudget()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("DispatchIO(fd "), "\(text)")
        #expect(text.contains("'ioBufferBytes'"), "\(text)")
        #expect(text.components(separatedBy: "setLimit(lowWater:").count == 2, "one warning: \(text)")
    }

    @Test func channelsWaitingBelowTheirLowWaterDoNotStarveOthers() async {
        await #expect(processExitsWith: .success) { IOReliabilityScenarios.lowWatersShareTheBudget() }
    }
}

enum IOReliabilityScenarios {
    static var engine: IOEngine { RuntimeParts.shared.manager.takeUnretainedValue().io }

    /// Runs one read and returns its transcript.
    static func read(_ channel: DispatchIO, offset: Int, length: Int, queue: DispatchQueue) -> IOTranscript {
        let transcript = IOTranscript()
        channel.read(offset: offset, length: length, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        return transcript
    }

    static func write(_ channel: DispatchIO, offset: Int, count: Int, queue: DispatchQueue) -> IOTranscript {
        let transcript = IOTranscript()
        patternBytes(count).withUnsafeBytes {
            channel.write(offset: offset, data: DispatchData(bytes: $0), queue: queue, ioHandler: transcript.handler)
        }
        #expect(transcript.waitDone())
        return transcript
    }

    static func overflowingOffsets() {
        let file = TestFile(count: 1000)
        defer { file.remove() }
        let fd = file.open(O_RDWR)
        let queue = DispatchQueue(label: "test.io.overflow")
        let random = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in }
        for (offset, length) in [(Int.max, 10), (Int.max, Int.max)] {
            let transcript = read(random, offset: offset, length: length, queue: queue)
            #expect(transcript.finalError == EINVAL, "read at \(offset) of \(length)")
            #expect(transcript.all.count == 1 && transcript.all.first?.count == -1)
        }
        #expect(write(random, offset: Int.max - 4, count: 32, queue: queue).finalError == EINVAL)
        // Just below the largest offset a read finds the end of the file (its requests
        // stop at Int64.max instead of passing it).
        for length in [100, Int.max] {
            let nearTheEnd = read(random, offset: Int.max - 5, length: length, queue: queue)
            #expect(nearTheEnd.finalError == 0 && nearTheEnd.data.isEmpty, "read of \(length)")
        }
        // Channel offsets count from the position the channel started at: 100 + Int.max overflows.
        lseek(fd, 100, SEEK_SET)
        let shifted = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in }
        #expect(read(shifted, offset: Int.max - 50, length: Int.max, queue: queue).finalError == EINVAL)
        #expect(write(shifted, offset: Int.max - 80, count: 32, queue: queue).finalError == EINVAL)
        let rest = read(shifted, offset: 0, length: Int.max, queue: queue).data == patternBytes(900, from: 100)
        #expect(rest)
        // A stream channel at a position where the write would pass the largest offset.
        if lseek(fd, off_t(Int64.max - 4), SEEK_SET) == off_t(Int64.max - 4) {
            let stream = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in }
            #expect(write(stream, offset: 0, count: 32, queue: queue).finalError == EINVAL)
            stream.close()
        }
        // The manager lived through all of it.
        #expect(read(random, offset: 10, length: 20, queue: queue).data == patternBytes(20, from: 10))
        random.close()
        shifted.close()
        Glibc.close(fd)
    }

    // MARK: Low water and the buffer budget

    /// Writes `bytes` to a pipe without blocking for more than `seconds` in all, so
    /// that a stalled reader fails the test instead of hanging the child. False when
    /// it gave up.
    static func writeAllWithin(_ fd: Int32, _ bytes: [UInt8], seconds: Double = patienceSeconds) -> Bool {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var written = 0
        let start = monotonicNanoseconds
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n > 0 { written += n; continue }
            if n < 0 && errno != EAGAIN || secondsSince(start) > seconds { return false }
            sleepMilliseconds(1)
        }
        return true
    }

    /// A 64 KiB budget in 4 KiB reads: small enough to fill in a test.
    static let smallBudget = RuntimeConfiguration(cores: 2, ioChunkBytes: 4096, ioBufferBytes: 65536)

    /// Reads a file through its own channel; true when every byte came.
    static func unrelatedReadFinishes() -> Bool {
        let file = TestFile(count: 100_000)
        defer { file.remove() }
        let fd = file.open()
        defer { Glibc.close(fd) }
        let queue = DispatchQueue(label: "test.io.unrelated")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in }
        defer { channel.close() }
        let transcript = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        return transcript.waitDone() && transcript.data == patternBytes(100_000)
    }

    static func lowWaterAboveBudget() {
        startRuntime(smallBudget)
        let pipe = blockingPipe()
        let queue = DispatchQueue(label: "test.io.lowwater-budget")
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in }
        channel.setLimit(lowWater: 1 << 20)
        channel.setLimit(lowWater: 1 << 21)  // warned once per channel
        let piped = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: piped.handler)
        let sent = patternBytes(256 * 1024)
        let writer = pipe.write
        let wrote = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            #expect(writeAllWithin(writer, sent))
            wrote.signal()
        }
        // The channel delivers (its low water now fits the budget) and others still read.
        #expect(eventually { piped.data.count >= 65536 })
        #expect(unrelatedReadFinishes())
        #expect(waited(wrote))
        Glibc.close(pipe.write)  // the end delivers the tail below the low water
        #expect(piped.waitDone())
        let intact = piped.data == sent  // not in #expect: a diff of 256 KiB takes minutes
        #expect(intact)
        channel.close()
        Glibc.close(pipe.read)
    }

    static func lowWatersShareTheBudget() {
        startRuntime(smallBudget)
        let pipes = [blockingPipe(), blockingPipe()]
        let queue = DispatchQueue(label: "test.io.lowwater-share", attributes: .concurrent)
        let channels = pipes.map { pipe in DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in } }
        let transcripts = channels.map { channel in
            channel.setLimit(lowWater: 48 * 1024)  // within the budget: no warning
            let transcript = IOTranscript()
            channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
            return transcript
        }
        // 40 KiB in each pipe: each below its low water, together more than the budget.
        for pipe in pipes { writeAll(pipe.write, patternBytes(40 * 1024)) }
        #expect(unrelatedReadFinishes())
        for transcript in transcripts { #expect(eventually { transcript.data.count == 40 * 1024 }) }
        for pipe in pipes { Glibc.close(pipe.write) }
        for transcript in transcripts {
            #expect(transcript.waitDone())
            let intact = transcript.data == patternBytes(40 * 1024)
            #expect(intact)
        }
        channels.forEach { $0.close() }
        for pipe in pipes { Glibc.close(pipe.read) }
    }
}
