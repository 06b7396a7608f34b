import CRinglet
import CRingletTestSupport
import Testing
@testable import Ringlet

/// A pipe for a test: both ends non-blocking, closed by `close()`.
struct TestPipe {
    let readEnd: Int32
    let writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        let r = fds.withUnsafeMutableBufferPointer { rl_pipe($0.baseAddress, 1) }
        precondition(r == 0, "pipe2 failed: \(r)")
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    func write(_ count: Int) {
        let bytes = [UInt8](repeating: 7, count: count)
        let written = bytes.withUnsafeBytes { rl_fd_write(writeEnd, $0.baseAddress, UInt64(count)) }
        precondition(written == count, "short write to the test pipe: \(written)")
    }

    /// Reads what is there (at most `count`); -errno when nothing.
    @discardableResult
    func read(_ count: Int) -> Int {
        var buffer = [UInt8](repeating: 0, count: count)
        return Int(buffer.withUnsafeMutableBytes { rl_fd_read(readEnd, $0.baseAddress, UInt64(count)) })
    }
}

/// Read and write sources: io_uring polls (multishot where the kernel has them).
@Suite struct DescriptorSourceTests {
    @Test func readSourceReportsTheBytesWaiting() {
        let pipe = TestPipe()
        let queue = DispatchQueue(label: "test.read.bytes")
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        let seen = Recorder<UInt>()
        source.setEventHandler {
            seen.append(source.data)
            pipe.read(Int(source.data))
        }
        source.activate()
        settle(queue)
        #expect(seen.count == 0)  // nothing to read yet
        pipe.write(100)
        #expect(eventually { seen.count >= 1 })
        #expect(seen.values.first == 100)
        let cancelled = DispatchSemaphore(value: 0)
        source.setCancelHandler {
            rl_close(pipe.readEnd)
            rl_close(pipe.writeEnd)
            cancelled.signal()
        }
        source.cancel()
        #expect(waited(cancelled))
    }

    @Test func unreadDataFiresAgainLevelTriggered() {
        let pipe = TestPipe()
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd,
                                                   queue: DispatchQueue(label: "test.read.level"))
        let seen = Recorder<UInt>()
        source.setEventHandler {
            seen.append(source.data)
            pipe.read(10)  // leaves the rest: the handler must run again
        }
        source.activate()
        pipe.write(30)
        #expect(eventually { seen.values.contains(10) })
        #expect(Array(seen.values.prefix(3)) == [30, 20, 10])
        source.setCancelHandler {
            rl_close(pipe.readEnd)
            rl_close(pipe.writeEnd)
        }
        source.cancel()
    }

    @Test func closingTheWriteEndDeliversEOF() {
        let pipe = TestPipe()
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd,
                                                   queue: DispatchQueue(label: "test.read.eof"))
        let eof = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        source.setEventHandler {
            if source.data == 0 {  // EOF: nothing to read and the writer is gone
                eof.signal()
                source.cancel()
            } else {
                pipe.read(Int(source.data))
            }
        }
        source.setCancelHandler {
            rl_close(pipe.readEnd)
            cancelled.signal()
        }
        source.activate()
        pipe.write(5)
        sleepMilliseconds(5)
        rl_close(pipe.writeEnd)
        #expect(waited(eof))
        #expect(waited(cancelled))
    }

    @Test func writeSourceReportsFreeSpaceAndFiresWhenDrained() {
        let pipe = TestPipe()
        // Fill the pipe: the write source must wait until the reader makes room.
        var filled = 0
        let chunk = [UInt8](repeating: 1, count: 4096)
        while true {
            let n = chunk.withUnsafeBytes { rl_fd_write(pipe.writeEnd, $0.baseAddress, 4096) }
            if n <= 0 { break }
            filled += Int(n)
        }
        let queue = DispatchQueue(label: "test.write")
        let source = DispatchSource.makeWriteSource(fileDescriptor: pipe.writeEnd, queue: queue)
        let seen = Recorder<UInt>()
        source.setEventHandler {
            seen.append(source.data)
            source.cancel()
        }
        source.activate()
        settle(queue)
        #expect(seen.count == 0)  // full: not writable
        while pipe.read(65536) > 0 {}  // drain it all
        #expect(eventually { seen.count == 1 })
        #expect((seen.values.first ?? 0) >= 4096)
        #expect(Int(seen.values.first ?? 0) <= filled)
        rl_close(pipe.readEnd)
        rl_close(pipe.writeEnd)
    }

    @Test func cancelledSourceSeesNoEventForANewOwnerOfItsFd() {
        let pipe = TestPipe()
        let queue = DispatchQueue(label: "test.read.reuse")
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        let events = AtomicCounter()
        let cancelled = DispatchSemaphore(value: 0)
        source.setEventHandler { events.increment() }
        source.setCancelHandler {
            rl_close(pipe.readEnd)
            rl_close(pipe.writeEnd)
            cancelled.signal()
        }
        source.activate()
        source.cancel()
        #expect(waited(cancelled))
        // The fd numbers are free again; a new pipe will likely get them.
        let reused = TestPipe()
        reused.write(8)
        settle(queue)
        #expect(events.value == 0)
        rl_close(reused.readEnd)
        rl_close(reused.writeEnd)
    }

    @Test func manyReadSourcesEachSeeTheirOwnPipe() {
        let queue = DispatchQueue(label: "test.read.many", attributes: .concurrent)
        let pipes = (0..<50).map { _ in TestPipe() }
        let counts = (0..<50).map { _ in AtomicCounter() }
        let sources = pipes.enumerated().map { index, pipe in
            let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
            source.setEventHandler {
                counts[index].increment(by: pipe.read(64))
            }
            source.setCancelHandler {
                rl_close(pipe.readEnd)
                rl_close(pipe.writeEnd)
            }
            source.activate()
            return source
        }
        for (index, pipe) in pipes.enumerated() { pipe.write(index + 1) }
        #expect(eventually { counts.enumerated().allSatisfy { $0.element.value == $0.offset + 1 } })
        for source in sources { source.cancel() }
    }
}
