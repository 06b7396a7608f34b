import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

/// The byte at `index` of every test file: a pattern that catches reordering.
func patternByte(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8 &+ 7) }

/// `count` bytes of the pattern starting at `start`.
func patternBytes(_ count: Int, from start: Int = 0) -> [UInt8] {
    (0..<count).map { patternByte(start + $0) }
}

/// A temporary file, removed by `remove()`.
struct TestFile {
    let path: String

    /// A file holding `count` pattern bytes.
    init(count: Int) {
        var template = Array("/tmp/ringlet-io-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        precondition(fd >= 0, "mkstemp failed: \(errno)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var written = 0
        let block = 1 << 20
        while written < count {
            let n = Swift.min(block, count - written)
            let bytes = patternBytes(n, from: written)
            let r = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, n) }
            precondition(r == n, "short write to \(path)")
            written += n
        }
        Glibc.close(fd)
    }

    /// Opens the file; the caller closes the fd.
    func open(_ flags: Int32 = O_RDONLY) -> Int32 {
        let fd = Glibc.open(path, flags)
        precondition(fd >= 0, "open \(path) failed: \(errno)")
        return fd
    }

    /// The file's bytes, read with plain read(2).
    func contents() -> [UInt8] {
        let fd = open()
        defer { Glibc.close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            result.append(contentsOf: buffer[0..<n])
        }
        return result
    }

    func remove() { unlink(path) }
}

/// What an I/O handler saw: each call's (done, bytes, error), in order.
final class IOTranscript: @unchecked Sendable {
    private let lock = FutexLock()
    private var calls: [(done: Bool, count: Int, error: Int32)] = []
    deinit { lock.deallocate() }
    private var bytes: [UInt8] = []
    private let finished = DispatchSemaphore(value: 0)
    private let concurrency = OverlapMeter()

    /// The handler to pass to read/write.
    var handler: (Bool, DispatchData?, Int32) -> Void {
        { [self] done, data, error in
            concurrency.measure {
                lock.withLock {
                    calls.append((done, data?.count ?? -1, error))
                    // Region by region: appending the data as a sequence of bytes goes
                    // through an iterator per byte, which in a debug build made an 8 MiB
                    // read take 10 s of a loaded 2-core machine, its whole patience.
                    data?.enumerateBytes { buffer, _, _ in bytes.append(contentsOf: buffer) }
                }
            }
            if done { finished.signal() }
        }
    }

    /// Waits for the done call.
    func waitDone(seconds: Double = patienceSeconds, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        waited(finished, seconds: seconds, sourceLocation: sourceLocation)
    }

    var all: [(done: Bool, count: Int, error: Int32)] { lock.withLock { calls } }
    var data: [UInt8] { lock.withLock { bytes } }
    var doneCalls: Int { all.filter(\.done).count }
    var finalError: Int32? { all.last(where: \.done)?.error }
    var overlapped: Bool { concurrency.maximum > 1 }
}

/// A blocking pipe (the usual kind for DispatchIO).
func blockingPipe() -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    let r = fds.withUnsafeMutableBufferPointer { rl_pipe($0.baseAddress, 0) }
    precondition(r == 0, "pipe2 failed: \(r)")
    return (fds[0], fds[1])
}

/// Writes all of `bytes` to `fd` with write(2).
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var written = 0
    while written < bytes.count {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
        precondition(n > 0, "write to fd \(fd) failed: \(errno)")
        written += n
    }
}
