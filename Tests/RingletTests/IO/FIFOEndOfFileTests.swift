// A FIFO opened for reading, without blocking, that no writer has opened: a read
// finds the end of the file at once (read(2) returns 0), on io_uring and on epoll
// alike. epoll never says such a FIFO is readable, so a backend that waited for
// readiness before reading waited forever.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct FIFOEndOfFileTests {
    /// A FIFO without a writer, opened O_RDONLY | O_NONBLOCK; removed by `close`.
    struct FIFO {
        let path = "/tmp/ringlet-fifo-\(rl_process_id())-\(monotonicNanoseconds)-\(UInt32.random(in: 0...UInt32.max))"
        let fd: Int32

        init() throws {
            try #require(mkfifo(path, 0o600) == 0)
            fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            try #require(fd >= 0)
        }

        func close() {
            rl_close(fd)
            unlink(path)
        }
    }

    @Test func aConvenienceReadOfAFIFOWithNoWriterEndsAtOnce() throws {
        let fifo = try FIFO()
        defer { fifo.close() }
        let done = DispatchSemaphore(value: 0)
        let outcome = Recorder<String>()
        DispatchIO.read(fromFileDescriptor: fifo.fd, maxLength: 64,
                        runningHandlerOn: DispatchQueue(label: "test.fifo.read")) { data, error in
            outcome.append("\(data.count) bytes, error \(error)")
            done.signal()
        }
        #expect(waited(done))
        #expect(outcome.values == ["0 bytes, error 0"])
    }

    @Test func aStreamChannelReadingAFIFOWithNoWriterIsDone() throws {
        let fifo = try FIFO()
        defer { fifo.close() }
        let queue = DispatchQueue(label: "test.fifo.channel")
        let channel = DispatchIO(type: .stream, fileDescriptor: fifo.fd, queue: queue) { _ in }
        let done = DispatchSemaphore(value: 0)
        let outcome = Recorder<String>()
        channel.read(offset: 0, length: Int.max, queue: queue) { finished, data, error in
            guard finished else { return }
            outcome.append("\(data?.count ?? 0) bytes, error \(error)")
            done.signal()
        }
        #expect(waited(done))
        #expect(outcome.values == ["0 bytes, error 0"])
        channel.close()
    }
}
