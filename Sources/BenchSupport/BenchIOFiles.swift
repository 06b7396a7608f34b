// What the I/O rows of `ringlet bench` share between the sides: the test file (in
// the page cache), the random offsets, and a plain writer thread feeding a pipe.
// Imports neither Dispatch nor Ringlet.
import Glibc

package enum BenchIOFiles {
    /// The file the read rows read: `bytes` long, created once and left in the page
    /// cache for both sides; the parent removes it after the rows.
    static func path(bytes: Int) -> String { "/tmp/ringlet-bench-io-\(bytes >> 20)m" }

    /// Creates the file unless it is there with the right size; reads it once so
    /// that every side reads from the page cache. Returns its path.
    @discardableResult
    package static func prepare(bytes: Int) -> String {
        let path = path(bytes: bytes)
        var st = stat()
        if stat(path, &st) != 0 || Int(st.st_size) != bytes {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            precondition(fd >= 0, "bench: cannot create \(path): errno \(errno)")
            var block = [UInt8](repeating: 0, count: 1 << 20)
            for i in block.indices { block[i] = UInt8(truncatingIfNeeded: i &* 131) }
            var written = 0
            while written < bytes {
                let n = block.withUnsafeBytes { write(fd, $0.baseAddress, Swift.min($0.count, bytes - written)) }
                precondition(n > 0, "bench: write to \(path) failed: errno \(errno)")
                written += n
            }
            close(fd)
        }
        let fd = open(path, O_RDONLY)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while (buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        return path
    }

    package static func remove(bytes: Int) { unlink(path(bytes: bytes)) }

    /// `count` 4 KiB-aligned offsets inside a file of `bytes`, the same for both sides.
    package static func randomOffsets(_ count: Int, bytes: Int) -> [Int] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let pages = UInt64(bytes / 4096)
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % pages) * 4096
        }
    }
}

/// A thread that writes `total` bytes to `fd` in 64 KiB writes, then closes it.
package final class BenchPipeWriter: @unchecked Sendable {
    private let fd: Int32
    private let total: Int
    private var thread = pthread_t()

    package init(fd: Int32, total: Int) {
        self.fd = fd
        self.total = total
    }

    package func start() { thread = benchStartThread { self.run() } }

    package func join() { pthread_join(thread, nil) }

    private func run() {
        let block = [UInt8](repeating: 0x5A, count: 64 * 1024)
        var written = 0
        while written < total {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, Swift.min($0.count, total - written)) }
            if n <= 0 { break }
            written += n
        }
        close(fd)
    }
}
