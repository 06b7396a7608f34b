import CRinglet
import Glibc
import Testing
@testable import Ringlet

/// DispatchIO: concurrency on one channel, barriers, water marks, intervals, the
/// class functions, QoS and the thread count.
@Suite struct DispatchIOBehaviourTests {
    /// The case that hangs Dispatch on Linux: a read waiting on a socket while a
    /// write on the same channel produces the answer it waits for.
    @Test func concurrentReadAndWriteOnOneSocketChannel() {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let queue = DispatchQueue(label: "test.io.socket")
        let channel = DispatchIO(type: .stream, fileDescriptor: fds[0], queue: queue) { _ in Glibc.close(fds[0]) }
        let reply = IOTranscript()
        channel.read(offset: 0, length: 4, queue: queue, ioHandler: reply.handler)
        // The peer answers "pong" once it has read "ping".
        let peer = fds[1]
        DispatchQueue.global().async {
            var buffer = [UInt8](repeating: 0, count: 4)
            var got = 0
            while got < 4 {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(peer, $0.baseAddress! + got, 4 - got) }
                if n <= 0 { return }
                got += n
            }
            if buffer == Array("ping".utf8) { writeAll(peer, Array("pong".utf8)) }
        }
        let sent = IOTranscript()
        Array("ping".utf8).withUnsafeBytes {
            channel.write(offset: 0, data: DispatchData(bytes: $0), queue: queue, ioHandler: sent.handler)
        }
        #expect(sent.waitDone())
        #expect(sent.finalError == 0)
        #expect(reply.waitDone())
        #expect(reply.data == Array("pong".utf8))
        channel.close()
        Glibc.close(fds[1])
    }

    /// Many reads and writes at once on one random channel, each on its own range.
    @Test func concurrentReadsAndWritesOnOneFileChannel() {
        let size = 4 << 20
        let file = TestFile(count: size)
        defer { file.remove() }
        let fd = file.open(O_RDWR)
        let queue = DispatchQueue(label: "test.io.mixed", attributes: .concurrent)
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let piece = size / 16
        var reads: [(Int, IOTranscript)] = []
        var writes: [(Int, IOTranscript)] = []
        for index in 0..<16 {
            let offset = index * piece
            let transcript = IOTranscript()
            if index % 2 == 0 {
                channel.read(offset: offset, length: piece, queue: queue, ioHandler: transcript.handler)
                reads.append((offset, transcript))
            } else {
                // Write the pattern shifted by one, so the result shows the write happened.
                let bytes = patternBytes(piece, from: offset + 1)
                bytes.withUnsafeBytes {
                    channel.write(offset: offset, data: DispatchData(bytes: $0), queue: queue,
                                  ioHandler: transcript.handler)
                }
                writes.append((offset, transcript))
            }
        }
        for (offset, transcript) in reads {
            #expect(transcript.waitDone())
            #expect(transcript.data == patternBytes(piece, from: offset))
        }
        for (_, transcript) in writes {
            #expect(transcript.waitDone())
            #expect(transcript.finalError == 0)
        }
        channel.close()
        let contents = file.contents()
        for (offset, _) in writes {
            #expect(Array(contents[offset..<offset + piece]) == patternBytes(piece, from: offset + 1))
        }
    }

    @Test func barrierRunsBetweenTheOperationsBeforeAndAfterIt() {
        let file = TestFile(count: 0)
        defer { file.remove() }
        let fd = file.open(O_RDWR)
        let queue = DispatchQueue(label: "test.io.barrier")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let events = Recorder<String>()
        let bytes = patternBytes(300_000)
        bytes.withUnsafeBytes {
            channel.write(offset: 0, data: DispatchData(bytes: $0), queue: queue) { done, _, _ in
                if done { events.append("write") }
            }
        }
        channel.barrier {
            // The write is complete: the file has all its bytes.
            var st = stat()
            fstat(fd, &st)
            events.append("barrier \(st.st_size)")
        }
        let read = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue) { done, data, error in
            if done { events.append("read") }
            read.handler(done, data, error)
        }
        #expect(read.waitDone())
        #expect(events.values == ["write", "barrier 300000", "read"])
        #expect(read.data == bytes)
        channel.close()
    }

    @Test func cleanupRunsOnceAfterCloseAndTheLastHandler() {
        let pipe = blockingPipe()
        let queue = DispatchQueue(label: "test.io.cleanup")
        let events = Recorder<String>()
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { error in
            events.append("cleanup \(error)")
        }
        channel.read(offset: 0, length: 3, queue: queue) { done, _, _ in
            if done { events.append("done") }
        }
        channel.close()  // not .stop: the read under way completes first
        settle(queue)  // the manager has gone round with the read waiting; nothing was delivered
        #expect(events.values.isEmpty)
        writeAll(pipe.write, patternBytes(3))
        #expect(eventually { events.count == 2 })
        #expect(events.values == ["done", "cleanup 0"])
        channel.close()
        settle(queue)
        #expect(events.count == 2)
        Glibc.close(pipe.read)
        Glibc.close(pipe.write)
    }

    @Test func lowWaterHoldsDataBackUntilEnoughArrived() {
        let pipe = blockingPipe()
        let queue = DispatchQueue(label: "test.io.lowwater")
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in Glibc.close(pipe.read) }
        channel.setLimit(lowWater: 100)
        let transcript = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        writeAll(pipe.write, patternBytes(60))
        settle(queue)  // the manager has reaped the 60 bytes; a delivery would have run
        #expect(transcript.all.isEmpty)  // 60 < 100
        writeAll(pipe.write, patternBytes(60, from: 60))
        #expect(eventually { transcript.data.count == 120 })
        #expect(transcript.all.first?.count == 120)
        writeAll(pipe.write, patternBytes(5, from: 120))
        Glibc.close(pipe.write)
        #expect(transcript.waitDone())  // the end delivers what is left, below the low water
        #expect(transcript.data == patternBytes(125))
        channel.close()
    }

    @Test func intervalDeliversBelowTheLowWater() {
        let pipe = blockingPipe()
        let queue = DispatchQueue(label: "test.io.interval")
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in Glibc.close(pipe.read) }
        channel.setLimit(lowWater: 1 << 20)
        channel.setInterval(interval: .milliseconds(20), flags: .strictInterval)
        let transcript = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        writeAll(pipe.write, patternBytes(10))
        #expect(eventually { transcript.data.count == 10 })
        #expect(transcript.doneCalls == 0)
        Glibc.close(pipe.write)
        #expect(transcript.waitDone())
        channel.close()
    }

    @Test func classReadAndWriteHandOverEverythingOnce() {
        let file = TestFile(count: 0)
        defer { file.remove() }
        let fd = file.open(O_RDWR)
        defer { Glibc.close(fd) }
        let queue = DispatchQueue(label: "test.io.class")
        let bytes = patternBytes(600_000)
        let wrote = DispatchSemaphore(value: 0)
        let writeResult = Recorder<Int32>()
        bytes.withUnsafeBytes {
            DispatchIO.write(toFileDescriptor: fd, data: DispatchData(bytes: $0), runningHandlerOn: queue) { rest, error in
                #expect(rest == nil)
                writeResult.append(error)
                wrote.signal()
            }
        }
        #expect(waited(wrote))
        #expect(writeResult.values == [0])
        #expect(lseek(fd, 0, SEEK_CUR) == 600_000)  // the descriptor's position moved, as write(2) would
        lseek(fd, 100, SEEK_SET)
        let readResult = Recorder<(Int, Int32)>()
        let done = DispatchSemaphore(value: 0)
        DispatchIO.read(fromFileDescriptor: fd, maxLength: 1000, runningHandlerOn: queue) { data, error in
            #expect(Array(data) == patternBytes(1000, from: 100))
            readResult.append((data.count, error))
            done.signal()
        }
        #expect(waited(done))
        #expect(readResult.count == 1)
        #expect(readResult.values.first?.0 == 1000)
    }

    @Test func requestsCarryTheIOPriorityOfTheirQueue() {
        #expect(KernelPriority.ioPriority(for: .background) == 3 << 13)   // idle class
        #expect(KernelPriority.ioPriority(for: .utility) == 2 << 13 | 6)
        #expect(KernelPriority.ioPriority(for: .userInteractive) == 2 << 13 | 1)
        let file = TestFile(count: 100_000)
        defer { file.remove() }
        let fd = file.open()
        let background = DispatchQueue(label: "test.io.background", qos: .background)
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: background) { _ in Glibc.close(fd) }
        let transcript = IOTranscript()
        let levels = Recorder<QoSLevel>()
        channel.read(offset: 0, length: Int.max, queue: background) { done, data, error in
            levels.append(currentLevel)
            transcript.handler(done, data, error)
        }
        #expect(transcript.waitDone())
        // The idle class is accepted without privilege: the data arrives.
        #expect(transcript.data == patternBytes(100_000))
        #expect(levels.values.allSatisfy { $0 == .background })
        channel.close()
    }

    /// In a child process: the count is the process's, and other suites running in
    /// parallel here start threads of their own.
    @Test func theThreadCountDoesNotChangeDuringIO() async {
        await #expect(processExitsWith: .success) { Self.threadCountDuringIO() }
    }

    static func threadCountDuringIO() {
        startRuntime(twoCoreConfiguration())
        let file = TestFile(count: 8 << 20)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.threads")
        _ = Runtime.statistics  // the runtime runs
        let before = processThreadIDs()
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let peak = AtomicCounter()
        let transcript = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue) { done, data, error in
            let now = threadsAdded(since: before)
            if now > peak.value { _ = peak.increment(by: now - peak.value) }
            transcript.handler(done, data, error)
        }
        #expect(transcript.waitDone())
        #expect(transcript.data.count == 8 << 20)
        #expect(peak.value == 0, "\(peak.value) threads appeared during the read")
        channel.close()
    }
}
