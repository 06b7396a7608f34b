import CRinglet
import Glibc
import Testing
@testable import Ringlet

/// DispatchIO against GCD's semantics where they are easy to get wrong: what a failed
/// read hands its handler, descriptors closed and reused under a channel, intervals
/// that must not outlive their read, several writers on one descriptor, and the
/// class read of a pipe.
@Suite struct DispatchIOReliabilityTests {
    // MARK: Failed reads hand over nil data

    @Test func aReadOnAClosedChannelGetsNilDataAndECANCELED() {
        let pipe = blockingPipe()
        defer { Glibc.close(pipe.read); Glibc.close(pipe.write) }
        let queue = DispatchQueue(label: "test.io.closed-read")
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in }
        channel.close()
        let transcript = IOTranscript()
        channel.read(offset: 0, length: 10, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        #expect(transcript.all.count == 1)
        #expect(transcript.all.first?.count == -1)  // nil, as GCD hands it
        #expect(transcript.finalError == ECANCELED)
    }

    /// GCD delivers what a failing read holds first (not done, error 0), then done
    /// with nil data and the error.
    @Test func aReadThatFailsDeliversItsBytesFirstThenNil() {
        let pipe = blockingPipe()
        defer { Glibc.close(pipe.read); Glibc.close(pipe.write) }
        let queue = DispatchQueue(label: "test.io.failed-read")
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in }
        channel.setLimit(lowWater: 1000)  // the 10 bytes below wait in the operation
        let transcript = IOTranscript()
        channel.read(offset: 0, length: 5000, queue: queue, ioHandler: transcript.handler)
        writeAll(pipe.write, patternBytes(10))
        #expect(eventually { rl_fd_readable_bytes(pipe.read) == 0 })  // the read took them
        #expect(transcript.all.isEmpty)
        channel.close(flags: .stop)
        #expect(transcript.waitDone())
        let calls = transcript.all
        #expect(calls.count == 2)
        #expect(calls.first.map { !$0.done && $0.count == 10 && $0.error == 0 } == true)
        #expect(calls.last.map { $0.done && $0.count == -1 && $0.error == ECANCELED } == true)
        #expect(transcript.data == patternBytes(10))
    }

    // MARK: A descriptor closed and reused under a channel

    /// The channel's fd is pointed at another pipe between two requests of a read:
    /// the read fails with EBADF instead of handing over the other pipe's bytes.
    @Test func aReadWhoseDescriptorIsReusedFailsWithEBADF() {
        let first = blockingPipe(), second = blockingPipe()
        let fd = first.read
        // Keeps the first pipe readable once `fd` leaves it, so writing to it never
        // raises SIGPIPE here, whether or not the channel's next read was issued before.
        let keep = dup(first.read)
        defer { [fd, keep, first.write, second.read, second.write].forEach { _ = Glibc.close($0) } }
        let queue = DispatchQueue(label: "test.io.reused-read")
        let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in }
        let transcript = IOTranscript()
        channel.read(offset: 0, length: 30, queue: queue, ioHandler: transcript.handler)
        writeAll(first.write, [UInt8](repeating: 0x41, count: 10))
        #expect(eventually { transcript.data.count == 10 })
        // The number now names the second pipe (dup2 closes the first's read end).
        #expect(dup2(second.read, fd) == fd)
        writeAll(first.write, [UInt8](repeating: 0x41, count: 5))  // ends a request still on the first pipe
        writeAll(second.write, [UInt8](repeating: 0x42, count: 20))
        #expect(transcript.waitDone())
        #expect(transcript.finalError == EBADF)
        #expect(!transcript.data.contains(0x42), "bytes of the pipe that took the fd number were delivered")
        #expect(transcript.all.last?.count == -1)
        channel.close()
    }

    /// A write on a channel whose fd now names another file writes nothing there.
    @Test func aWriteWhoseDescriptorIsReusedFailsWithEBADFAndLeavesTheOtherFileAlone() {
        let original = TestFile(count: 100), other = TestFile(count: 100)
        defer { original.remove(); other.remove() }
        let fd = original.open(O_RDWR)
        let queue = DispatchQueue(label: "test.io.reused-write")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in }
        let replacement = other.open(O_RDWR)
        #expect(dup2(replacement, fd) == fd)
        Glibc.close(replacement)
        let transcript = IOTranscript()
        [UInt8](repeating: 0xEE, count: 50).withUnsafeBytes {
            channel.write(offset: 0, data: DispatchData(bytes: $0), queue: queue, ioHandler: transcript.handler)
        }
        #expect(transcript.waitDone())
        #expect(transcript.finalError == EBADF)
        #expect(transcript.all.last?.count == 50)  // all of it comes back unwritten
        #expect(other.contents() == patternBytes(100))
        #expect(original.contents() == patternBytes(100))
        channel.close()
        Glibc.close(fd)
    }

    // MARK: Intervals

    /// A finished read's interval timer goes with it: a channel dropped without
    /// `close()` runs its cleanup handler at once, not an interval later.
    @Test func anIntervalDoesNotKeepAFinishedChannelAlive() {
        let file = TestFile(count: 3000)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.interval-done")
        let cleaned = DispatchSemaphore(value: 0)
        let transcript = IOTranscript()
        do {
            let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in
                Glibc.close(fd)
                cleaned.signal()
            }
            channel.setInterval(interval: .seconds(100))
            channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        }
        #expect(transcript.waitDone())
        #expect(transcript.data == patternBytes(3000))
        #expect(waited(cleaned, seconds: 5), "the cleanup handler waited for the 100 s interval")
    }
}

extension DispatchIOReliabilityTests {
    // MARK: Several writers on one descriptor

    /// Record `index` of the concurrent-writer tests: its number, then pattern bytes.
    static func record(_ index: Int) -> [UInt8] {
        [UInt8(index & 0xFF), UInt8(index >> 8)] + patternBytes(30, from: index * 32)
    }

    /// Every 32-byte record of `contents` is one of `0..<count`, each exactly once.
    static func recordsIntact(_ contents: [UInt8], count: Int) -> Bool {
        guard contents.count == count * 32 else { return false }
        var seen = Set<Int>()
        for start in stride(from: 0, to: contents.count, by: 32) {
            let index = Int(contents[start]) | Int(contents[start + 1]) << 8
            guard index < count, Array(contents[start..<start + 32]) == record(index) else { return false }
            seen.insert(index)
        }
        return seen.count == count
    }

    /// libdispatch serialises the I/O of one descriptor across channels: 320
    /// concurrent class writes append 320 whole records.
    @Test func concurrentClassWritesToOneDescriptorKeepEveryRecord() {
        let file = TestFile(count: 0)
        defer { file.remove() }
        let fd = file.open(O_WRONLY)
        defer { Glibc.close(fd) }
        let queue = DispatchQueue(label: "test.io.class-writers", attributes: .concurrent)
        let group = DispatchGroup()
        let failures = AtomicCounter()
        DispatchQueue.concurrentPerform(iterations: 320) { index in
            group.enter()
            Self.record(index).withUnsafeBytes {
                DispatchIO.write(toFileDescriptor: fd, data: DispatchData(bytes: $0), runningHandlerOn: queue) { rest, error in
                    if rest != nil || error != 0 { _ = failures.increment() }
                    group.leave()
                }
            }
        }
        #expect(waited(group))
        #expect(failures.value == 0)
        let contents = file.contents()
        #expect(contents.count == 320 * 32)
        #expect(Self.recordsIntact(contents, count: 320))
        #expect(lseek(fd, 0, SEEK_CUR) == 320 * 32)
    }

    /// Stream channels made separately on one descriptor share its position.
    @Test func streamChannelsOnOneDescriptorShareItsPosition() {
        let file = TestFile(count: 0)
        defer { file.remove() }
        let fd = file.open(O_WRONLY)
        defer { Glibc.close(fd) }
        let queue = DispatchQueue(label: "test.io.stream-writers", attributes: .concurrent)
        let channels = (0..<4).map { _ in DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in } }
        let group = DispatchGroup()
        let failures = AtomicCounter()
        DispatchQueue.concurrentPerform(iterations: 160) { index in
            group.enter()
            Self.record(index).withUnsafeBytes {
                channels[index % 4].write(offset: 0, data: DispatchData(bytes: $0), queue: queue) { done, rest, error in
                    if rest != nil || error != 0 { _ = failures.increment() }
                    if done { group.leave() }
                }
            }
        }
        #expect(waited(group))
        #expect(failures.value == 0)
        #expect(Self.recordsIntact(file.contents(), count: 160))
        channels.forEach { $0.close() }
    }

    // MARK: The class read of a pipe

    /// Dispatch's convenience read hands over what a pipe has once it has some,
    /// without waiting for `maxLength` or the end.
    @Test func classReadOfAPipeDeliversWhatIsThere() {
        let pipe = blockingPipe()
        defer { Glibc.close(pipe.read); Glibc.close(pipe.write) }
        let queue = DispatchQueue(label: "test.io.class-pipe")
        let results = Recorder<([UInt8], Int32)>()
        writeAll(pipe.write, patternBytes(10))
        DispatchIO.read(fromFileDescriptor: pipe.read, maxLength: 1000, runningHandlerOn: queue) { data, error in
            results.append((Array(data), error))
        }
        #expect(eventually { results.count == 1 })
        #expect(results.values.first?.0 == patternBytes(10))
        #expect(results.values.first?.1 == 0)
        // On an empty pipe it waits for the first bytes, then hands over what came.
        DispatchIO.read(fromFileDescriptor: pipe.read, maxLength: 1000, runningHandlerOn: queue) { data, error in
            results.append((Array(data), error))
        }
        writeAll(pipe.write, patternBytes(7, from: 10))
        #expect(eventually { results.count == 2 })
        #expect(results.values.last?.0 == patternBytes(7, from: 10))
    }
}

/// What the reliability tests look at inside the runtime.
enum IOReliabilityProbe {
    static var engine: IOEngine { RuntimeParts.shared.manager.takeUnretainedValue().io }
}
