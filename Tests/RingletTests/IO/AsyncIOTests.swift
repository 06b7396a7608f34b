// DispatchIO awaited (DispatchIO+Async.swift, DispatchIO+Chunks.swift): whole reads and
// writes, a pipe as a sequence of chunks, errors naming the fd, and a cancelled task
// whose read ends on the ring. Each scenario is a child process whose tasks run on
// Ringlet's pool (ConcurrencySupport.swift), not on the test process's executor, which
// every other suite shares; each step it awaits is named for the watchdog.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct AsyncIOTests {
    /// An awaited read whose done handler runs before `AwaitedOperation.run` gets the
    /// operation back (a short read can end on another thread that soon) is freed once
    /// it has ended. It was kept in a cycle with its handler: a leak LeakSanitizer
    /// reported at a child's exit, which ended chunk-reading children with status 1.
    @Test func anOperationDoneBeforeItIsHandedBackIsFreed() async {
        var fds: [Int32] = [-1, -1]
        #expect(fds.withUnsafeMutableBufferPointer { rl_pipe($0.baseAddress, 0) } == 0)
        var byte: UInt8 = 7
        #expect(rl_fd_write(fds[1], &byte, 1) == 1)
        Glibc.close(fds[1])
        let fd = fds[0]
        let channel = DispatchIO(type: .stream, fileDescriptor: fd,
                                 queue: DispatchQueue(label: "test.async.done-first")) { _ in Glibc.close(fd) }
        defer { channel.close() }
        let handlerQueue = DispatchQueue(label: "test.async.done-first.handler")
        weak var made: IOOperation?
        let outcome = await AwaitedOperation.run { handler in
            let finished = DispatchSemaphore(value: 0)
            let operation = channel.read(offset: 0, length: 1, queue: handlerQueue, endsWhenDrained: false) {
                handler($0, $1, $2)
                if $0 { finished.signal() }
            }
            #expect(waited(finished), "the read of one byte did not end")
            made = operation
            return operation
        }
        #expect(outcome.error == 0 && outcome.data.count == 1)
        #expect(eventually { made == nil }, "the awaited read is still alive after it ended")
    }

    @Test func aWholeReadOfAFileIsItsBytes() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let count = 3 * 256 * 1024 + 7  // several requests, the last one short
                let file = TestFile(count: count)
                defer { file.remove() }
                let fd = file.open()
                let queue = DispatchQueue(label: "test.async.whole")
                let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
                defer { channel.close() }
                do {
                    ConcurrencyChild.step("awaiting a whole read of \(count) bytes")
                    let data = try await channel.read(offset: 0, length: Int.max)
                    if [UInt8](data) != patternBytes(count) { return "the whole read gave \(data.count) bytes, not the file's" }
                    ConcurrencyChild.step("awaiting a read of 5000 bytes at 1000")
                    let middle = try await channel.read(offset: 1000, length: 5000)
                    if [UInt8](middle) != patternBytes(5000, from: 1000) { return "the read at 1000 gave other bytes" }
                    let second = file.open()
                    defer { Glibc.close(second) }
                    ConcurrencyChild.step("awaiting the class form's read of 4096 bytes")
                    let head = try await DispatchIO.read(fromFileDescriptor: second, maxLength: 4096, runningHandlerOn: queue)
                    return [UInt8](head) == patternBytes(4096) ? nil : "the class form's read gave other bytes"
                } catch {
                    return "a read threw \(error)"
                }
            }
        }
    }

    @Test func aWriteIsReadBack() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let file = TestFile(count: 0)
                defer { file.remove() }
                let fd = file.open(O_RDWR)
                let queue = DispatchQueue(label: "test.async.write")
                let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
                let bytes = patternBytes(300_001)
                do {
                    ConcurrencyChild.step("awaiting a write of \(bytes.count) bytes")
                    try await channel.write(offset: 0, data: bytes.withUnsafeBytes { DispatchData(bytes: $0) })
                    ConcurrencyChild.step("awaiting the read back")
                    let back = try await channel.read(offset: 0, length: Int.max)
                    channel.close()
                    if [UInt8](back) != bytes { return "read back \(back.count) bytes, not the \(bytes.count) written" }
                    if file.contents() != bytes { return "the file does not hold the bytes written" }

                    // The class form appends at the descriptor's position.
                    let appender = file.open(O_WRONLY | O_APPEND)
                    defer { Glibc.close(appender) }
                    let tail = patternBytes(10, from: 7)
                    ConcurrencyChild.step("awaiting the class form's write of 10 bytes")
                    try await DispatchIO.write(toFileDescriptor: appender,
                                               data: tail.withUnsafeBytes { DispatchData(bytes: $0) },
                                               runningHandlerOn: queue)
                    return file.contents() == bytes + tail ? nil : "the class form's write did not append its bytes"
                } catch {
                    channel.close()
                    return "an operation threw \(error)"
                }
            }
        }
    }

    /// A writer thread fills the pipe in pieces and closes it: the chunks are every
    /// byte in order, more than one piece, and the sequence ends at the end.
    @Test func aPipeReadAsChunksYieldsEveryByteInOrderAndEndsAtTheEnd() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
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
                do {
                    ConcurrencyChild.step("awaiting the first chunk")
                    for try await chunk in channel.chunks() {
                        if chunk.isEmpty { return "chunk \(pieces) is empty" }
                        received.append(contentsOf: chunk)
                        pieces += 1
                        ConcurrencyChild.step("awaiting chunk \(pieces) after \(received.count) of \(count) bytes")
                    }
                } catch {
                    channel.close()
                    return "the chunks threw \(error) after \(received.count) bytes"
                }
                channel.close()
                if received.count != count { return "the chunks held \(received.count) of \(count) bytes" }
                if received != bytes { return "the chunks' bytes are out of place" }
                if pieces < 2 { return "the whole stream came as one chunk" }
                ConcurrencyChild.step("waiting for the channel's cleanup handler")
                return waited(closed) ? nil : "the channel's cleanup handler never ran"
            }
        }
    }

    @Test func chunksOfAFileStopAtTheLengthAsked() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let file = TestFile(count: 700_000)
                defer { file.remove() }
                let fd = file.open()
                let channel = DispatchIO(type: .random, fileDescriptor: fd,
                                         queue: DispatchQueue(label: "test.async.file-chunks")) { _ in Glibc.close(fd) }
                defer { channel.close() }
                channel.setLimit(highWater: 100_000)
                var received: [UInt8] = []
                var largest = 0
                do {
                    ConcurrencyChild.step("awaiting the first chunk of the file")
                    for try await chunk in channel.chunks(offset: 5, length: 650_000) {
                        received.append(contentsOf: chunk)
                        largest = Swift.max(largest, chunk.count)
                        ConcurrencyChild.step("awaiting a chunk after \(received.count) of 650,000 bytes")
                    }
                } catch {
                    return "the chunks threw \(error) after \(received.count) bytes"
                }
                if received != patternBytes(650_000, from: 5) { return "the chunks held \(received.count) other bytes" }
                return largest <= 100_000 ? nil : "a chunk of \(largest) bytes passed the high water of 100,000"
            }
        }
    }

    /// A read of a write-only descriptor: EBADF, thrown as an error naming the fd, by
    /// each form of read.
    @Test func anErrnoThrowsAnErrorNamingTheFd() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let file = TestFile(count: 100)
                defer { file.remove() }
                let fd = file.open(O_WRONLY)
                defer { Glibc.close(fd) }
                let queue = DispatchQueue(label: "test.async.ebadf")
                let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in }
                defer { channel.close() }
                let expected = "read of DispatchIO(fd \(fd)) failed with EBADF (errno 9)"
                do {
                    ConcurrencyChild.step("awaiting a read of a write-only fd")
                    _ = try await channel.read(offset: 0, length: 10)
                    return "a read of a write-only fd returned"
                } catch let error as DispatchIO.OperationError {
                    if error.errno != .badFile || error.fileDescriptor != fd { return "the read threw \(error)" }
                    if error.isWrite || error.isTaskCancellation { return "the read's error says write or cancel" }
                    if error.description != expected { return "the read's error reads '\(error)', not '\(expected)'" }
                } catch {
                    return "the read threw \(error)"
                }
                do {
                    ConcurrencyChild.step("awaiting a chunk of a write-only fd")
                    for try await _ in channel.chunks() { return "a chunk came from a write-only fd" }
                    return "the chunks of a write-only fd ended without an error"
                } catch let error as DispatchIO.OperationError {
                    if error.errno != .badFile || error.fileDescriptor != fd { return "the chunks threw \(error)" }
                } catch {
                    return "the chunks threw \(error)"
                }
                do {
                    ConcurrencyChild.step("awaiting the class form's read of a write-only fd")
                    _ = try await DispatchIO.read(fromFileDescriptor: fd, maxLength: 10, runningHandlerOn: queue)
                    return "the class form's read of a write-only fd returned"
                } catch let error as DispatchIO.OperationError {
                    return error.errno == .badFile && error.fileDescriptor == fd
                        ? nil : "the class form's read threw \(error)"
                } catch {
                    return "the class form's read threw \(error)"
                }
            }
        }
    }

    /// A read of an empty pipe, cancelled: it throws CancellationError promptly, its
    /// request leaves the ring, and it takes nothing written later — no part of it runs
    /// after the throw; the channel is idle (its cleanup handler runs on close).
    @Test func cancellingAPendingPipeReadThrowsPromptlyAndLeavesNothingBehind() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let pipe = blockingPipe()
                defer { Glibc.close(pipe.read) }
                let cleaned = DispatchSemaphore(value: 0)
                let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read,
                                         queue: DispatchQueue(label: "test.async.cancel")) { _ in cleaned.signal() }
                let ended = AtomicCounter()
                let reader = Task.detached { () -> String in
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
                ConcurrencyChild.step("waiting for the read to reach the ring")
                guard await eventuallyAsync({ requestsOnTheRing(of: channel) > 0 }) else {
                    Glibc.close(pipe.write)  // ends the read
                    return "the read never reached the ring"
                }
                let start = monotonicNanoseconds
                reader.cancel()
                ConcurrencyChild.step("waiting for the cancelled read to end")
                guard await eventuallyAsync({ ended.value == 1 }) else {
                    Glibc.close(pipe.write)  // ends the read, and then the child
                    return "the cancelled read did not end"
                }
                defer { Glibc.close(pipe.write) }
                let took = secondsSince(start)
                let outcome = await reader.value
                if outcome != "cancelled" { return "the cancelled read: \(outcome)" }
                if took > 2 { return "the cancelled read took \(took) s to end" }
                let left = requestsOnTheRing(of: channel)
                if left != 0 { return "the cancelled read left \(left) request(s) on the ring" }
                // Nothing of the read is left: a byte written now stays in the pipe.
                ConcurrencyChild.step("checking that a byte written now stays in the pipe")
                writeAll(pipe.write, [42])
                onManager {}
                onManager {}
                var byte: UInt8 = 0
                if Glibc.read(pipe.read, &byte, 1) != 1 || byte != 42 { return "the cancelled read took the byte" }
                channel.close()
                ConcurrencyChild.step("waiting for the channel's cleanup handler")
                return waited(cleaned) ? nil : "the channel never became idle (no cleanup handler)"
            }
        }
    }

    /// The same for every form, one after another on one pipe: a whole read, a chunk and
    /// a class read, each cancelled while its request waits on the ring.
    @Test func cancellingEndsEachFormOfRead() async {
        await #expect(processExitsWith: .success) {
            await ConcurrencyChild.run {
                let pipe = blockingPipe()
                defer { Glibc.close(pipe.read) }
                let queue = DispatchQueue(label: "test.async.cancel.forms")
                let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in }
                defer { channel.close() }
                let reads: [(name: String, read: @Sendable () async throws -> Void)] = [
                    ("a whole read", { _ = try await channel.read(offset: 0, length: 10) }),
                    ("a chunk", { for try await _ in channel.chunks() {} }),
                    ("a class read", {
                        _ = try await DispatchIO.read(fromFileDescriptor: pipe.read, maxLength: 10, runningHandlerOn: queue)
                    }),
                ]
                for (name, read) in reads {
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
                    ConcurrencyChild.step("waiting for \(name) to reach the ring")
                    guard await eventuallyAsync({ requestsOnTheRing(of: pipe.read) > 0 }) else {
                        Glibc.close(pipe.write)  // ends the read
                        return "\(name) never reached the ring"
                    }
                    task.cancel()
                    ConcurrencyChild.step("waiting for \(name), cancelled, to end")
                    guard await eventuallyAsync({ ended.value == 1 }) else {
                        Glibc.close(pipe.write)  // ends the read, and then the child
                        return "\(name), cancelled, did not end"
                    }
                    if !(await task.value) { return "\(name), cancelled, did not throw CancellationError" }
                    let left = requestsOnTheRing(of: pipe.read)
                    if left != 0 { return "\(name), cancelled, left \(left) request(s) on the ring" }
                }
                defer { Glibc.close(pipe.write) }
                ConcurrencyChild.step("checking that a byte written now stays in the pipe")
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

/// `eventually` for a task: polls every millisecond with `Task.sleep` (a window in the
/// manager's timers), so that the pool thread stays free for the work the condition
/// waits on. Bounded by the patience.
func eventuallyAsync(within seconds: Double = patienceSeconds, _ condition: () -> Bool) async -> Bool {
    let start = monotonicNanoseconds
    while true {
        if condition() { return true }
        if secondsSince(start) > seconds { return false }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
}
