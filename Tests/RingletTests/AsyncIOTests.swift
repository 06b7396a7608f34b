// DispatchIO awaited (DispatchIO+Async.swift, DispatchIO+Chunks.swift): whole reads and
// writes, a pipe as a sequence of chunks, errors naming the fd, and a cancelled task
// whose read ends on the ring. In the test process, where the tasks run on the
// toolchain's executor and the handlers on Ringlet's pool; the last test runs the same
// in a child whose tasks run on Ringlet's pool.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct AsyncIOTests {
    @Test func aWholeReadOfAFileIsItsBytes() async throws {
        let count = 3 * 256 * 1024 + 7  // several requests, the last one short
        let file = TestFile(count: count)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.async.whole")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let data = try await channel.read(offset: 0, length: Int.max)
        #expect(data.count == count)
        #expect([UInt8](data) == patternBytes(count))
        let middle = try await channel.read(offset: 1000, length: 5000)
        #expect([UInt8](middle) == patternBytes(5000, from: 1000))
        channel.close()

        let second = file.open()
        defer { Glibc.close(second) }
        let head = try await DispatchIO.read(fromFileDescriptor: second, maxLength: 4096, runningHandlerOn: queue)
        #expect([UInt8](head) == patternBytes(4096))
    }

    @Test func aWriteIsReadBack() async throws {
        let file = TestFile(count: 0)
        defer { file.remove() }
        let fd = file.open(O_RDWR)
        let queue = DispatchQueue(label: "test.async.write")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let bytes = patternBytes(300_001)
        try await channel.write(offset: 0, data: bytes.withUnsafeBytes { DispatchData(bytes: $0) })
        let back = try await channel.read(offset: 0, length: Int.max)
        #expect([UInt8](back) == bytes)
        channel.close()
        #expect(file.contents() == bytes)

        // The class form appends at the descriptor's position.
        let appender = file.open(O_WRONLY | O_APPEND)
        defer { Glibc.close(appender) }
        let tail = patternBytes(10, from: 7)
        try await DispatchIO.write(toFileDescriptor: appender, data: tail.withUnsafeBytes { DispatchData(bytes: $0) },
                                   runningHandlerOn: queue)
        #expect(file.contents() == bytes + tail)
    }

    /// A writer thread fills the pipe in pieces and closes it: the chunks are every
    /// byte in order, more than one piece, and the sequence ends at the end.
    @Test func aPipeReadAsChunksYieldsEveryByteInOrderAndEndsAtTheEnd() async throws {
        let pipe = blockingPipe()
        let count = 1_000_003
        let bytes = patternBytes(count)
        DispatchQueue(label: "test.async.chunks.writer").async {
            var at = 0
            while at < count {
                let piece = Swift.min(10_000 + at % 7_000, count - at)
                writeAll(pipe.write, Array(bytes[at..<at + piece]))
                at += piece
            }
            Glibc.close(pipe.write)
        }
        let closed = DispatchSemaphore(value: 0)
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read,
                                 queue: DispatchQueue(label: "test.async.chunks")) { _ in
            Glibc.close(pipe.read)
            closed.signal()
        }
        var received: [UInt8] = []
        var pieces = 0
        for try await chunk in channel.chunks() {
            #expect(chunk.count > 0)
            received.append(contentsOf: chunk)
            pieces += 1
        }
        #expect(received.count == count)
        #expect(received == bytes)
        #expect(pieces > 1)
        channel.close()
        #expect(waited(closed))
    }

    @Test func chunksOfAFileStopAtTheLengthAsked() async throws {
        let file = TestFile(count: 700_000)
        defer { file.remove() }
        let fd = file.open()
        let channel = DispatchIO(type: .random, fileDescriptor: fd,
                                 queue: DispatchQueue(label: "test.async.file-chunks")) { _ in Glibc.close(fd) }
        channel.setLimit(highWater: 100_000)
        var received: [UInt8] = []
        var largest = 0
        for try await chunk in channel.chunks(offset: 5, length: 650_000) {
            received.append(contentsOf: chunk)
            largest = Swift.max(largest, chunk.count)
        }
        #expect(received == patternBytes(650_000, from: 5))
        #expect(largest <= 100_000)
        channel.close()
    }

    /// A read of a write-only descriptor: EBADF, thrown as an error naming the fd.
    @Test func anErrnoThrowsAnErrorNamingTheFd() async {
        let file = TestFile(count: 100)
        defer { file.remove() }
        let fd = file.open(O_WRONLY)
        defer { Glibc.close(fd) }
        let queue = DispatchQueue(label: "test.async.ebadf")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in }
        let expected = "read of DispatchIO(fd \(fd)) failed with EBADF (errno 9)"
        do {
            _ = try await channel.read(offset: 0, length: 10)
            Issue.record("a read of a write-only fd returned")
        } catch let error as DispatchIO.OperationError {
            #expect(error.errno == .badFile)
            #expect(error.fileDescriptor == fd)
            #expect(!error.isWrite && !error.isTaskCancellation)
            #expect(error.description == expected)
        } catch {
            Issue.record("unexpected error \(error)")
        }
        do {
            for try await _ in channel.chunks() { Issue.record("a chunk came from a write-only fd") }
            Issue.record("the chunks of a write-only fd ended without an error")
        } catch let error as DispatchIO.OperationError {
            #expect(error.errno == .badFile && error.fileDescriptor == fd)
        } catch {
            Issue.record("unexpected error \(error)")
        }
        await #expect(throws: DispatchIO.OperationError.self) {
            _ = try await DispatchIO.read(fromFileDescriptor: fd, maxLength: 10, runningHandlerOn: queue)
        }
        channel.close()
    }

    /// A read of an empty pipe, cancelled: it throws CancellationError promptly, its
    /// request leaves the ring, and it takes nothing written later — no part of it runs
    /// after the throw; the channel is idle (its cleanup handler runs on close).
    @Test func cancellingAPendingPipeReadThrowsPromptlyAndLeavesNothingBehind() async {
        let pipe = blockingPipe()
        let cleaned = DispatchSemaphore(value: 0)
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read,
                                 queue: DispatchQueue(label: "test.async.cancel")) { _ in cleaned.signal() }
        defer { Glibc.close(pipe.read) }
        let ended = AtomicCounter()
        let reader = Task { () -> String in
            defer { ended.increment() }
            do {
                let data = try await channel.read(offset: 0, length: 100)
                return "the read returned \(data.count) bytes"
            } catch is CancellationError {
                return "cancelled"
            } catch {
                return "the read threw \(error)"
            }
        }
        #expect(await eventuallyAsync { requestsOnTheRing(of: channel) > 0 }, "the read never reached the ring")
        let start = monotonicNanoseconds
        reader.cancel()
        if !(await eventuallyAsync { ended.value == 1 }) {
            Issue.record("the cancelled read did not end; closing the pipe ends it")
            Glibc.close(pipe.write)
            _ = await reader.value
            channel.close()
            return
        }
        defer { Glibc.close(pipe.write) }
        let outcome = await reader.value
        #expect(outcome == "cancelled")
        #expect(secondsSince(start) < 2)
        #expect(requestsOnTheRing(of: channel) == 0)
        // Nothing of the read is left: a byte written now stays in the pipe.
        writeAll(pipe.write, [42])
        onManager {}
        onManager {}
        var byte: UInt8 = 0
        #expect(Glibc.read(pipe.read, &byte, 1) == 1 && byte == 42)
        channel.close()
        #expect(waited(cleaned), "the channel never became idle")
    }

    /// The same on Ringlet's pool, for every form: a whole read, a chunk and a class read.
    @Test func cancellingOnRingletsPoolEndsEachFormOfRead() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let pipe = blockingPipe()
                let queue = DispatchQueue(label: "test.async.cancel.pool")
                let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in }
                let reads: [@Sendable () async throws -> Void] = [
                    { _ = try await channel.read(offset: 0, length: 10) },
                    { for try await _ in channel.chunks() {} },
                    { _ = try await DispatchIO.read(fromFileDescriptor: pipe.read, maxLength: 10, runningHandlerOn: queue) },
                ]
                for (index, read) in reads.enumerated() {
                    let ended = AtomicCounter()
                    let task = Task.detached { () -> Bool in
                        defer { ended.increment() }
                        do {
                            try await read()
                            return false
                        } catch {
                            return error is CancellationError
                        }
                    }
                    guard eventually({ requestsOnTheRing(of: pipe.read) > 0 }) else { return "read \(index) never started" }
                    task.cancel()
                    if !eventually({ ended.value == 1 }) {
                        Glibc.close(pipe.write)  // ends the read, and then the child
                        return "cancelled read \(index) did not end"
                    }
                    if !(await task.value) { return "read \(index) did not throw CancellationError" }
                    if requestsOnTheRing(of: pipe.read) != 0 { return "read \(index) left a request on the ring" }
                }
                writeAll(pipe.write, [7])
                onManager {}
                onManager {}
                var byte: UInt8 = 0
                return Glibc.read(pipe.read, &byte, 1) == 1 && byte == 7 ? nil : "a cancelled read took the byte"
            }
        }
    }
}

/// The requests of `channel`'s operations on the ring now (asked on the manager thread).
func requestsOnTheRing(of channel: DispatchIO) -> Int {
    let engine = channel.engine
    return onManager { engine.slots.count { $0?.operation.channel === channel } } ?? -1
}

/// The requests on the ring now for any channel on descriptor `fd` (the class forms
/// make their own channel).
func requestsOnTheRing(of fd: Int32) -> Int {
    let engine = RuntimeParts.shared.manager.takeUnretainedValue().io
    return onManager { engine.slots.count { $0?.operation.channel.fileDescriptor == fd } } ?? -1
}

/// `eventually` for async tests: polls every millisecond with `Task.sleep`, so that the
/// thread stays free for the task the condition waits on (in the test process, tasks
/// share the toolchain's few cooperative threads). Bounded by the patience.
func eventuallyAsync(within seconds: Double = patienceSeconds, _ condition: () -> Bool) async -> Bool {
    let start = monotonicNanoseconds
    while true {
        if condition() { return true }
        if secondsSince(start) > seconds { return false }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
}
