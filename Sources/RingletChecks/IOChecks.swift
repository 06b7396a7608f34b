import CRinglet
import CRingletTestSupport
import Ringlet

// DispatchIO and DispatchData on the real ring: a file round trip, a pipe stream and
// `.stop`. Every wait is bounded by `timeout`. No C library module: open(2) flags
// are spelled out (the same numbers on x86-64 and aarch64, asm-generic/fcntl.h).
private let openReadWrite: Int32 = 0o2, openCreate: Int32 = 0o100, openTruncate: Int32 = 0o1000

/// The byte at `index` of the checks' data.
private func pattern(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 31 &+ 7) }

/// Counts bytes that differ from the pattern (from `start`), for one handler's data.
private func mismatches(_ data: DispatchData, from start: Int) -> Int {
    var wrong = 0
    data.enumerateBytes { bytes, index, _ in
        for i in 0..<bytes.count where bytes[i] != pattern(start + index + i) { wrong += 1 }
    }
    return wrong
}

/// Adds the I/O checks to `harness`.
func runIOChecks(_ harness: CheckHarness) {
    harness.run("a DispatchIO channel writes a file and reads it back in order") {
        // /tmp may be missing in an initramfs; the root is writable there.
        var path = "/tmp/ringlet-checks.io"
        var fd = rl_open(path, openReadWrite | openCreate | openTruncate, 0o600)
        if fd < 0 {
            path = "/ringlet-checks.io"
            fd = rl_open(path, openReadWrite | openCreate | openTruncate, 0o600)
        }
        if fd < 0 { return "could not create a file: errno \(-fd)" }
        _ = rl_unlink(path)  // the open descriptor keeps it until the channel closes it
        let count = 3 * 256 * 1024 + 1
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        for i in 0..<count { bytes.storeBytes(of: pattern(i), toByteOffset: i, as: UInt8.self) }
        let data = DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: bytes, count: count),
                                deallocator: .custom(nil, { bytes.deallocate() }))
        let queue = DispatchQueue(label: "checks.io.file")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in rl_close(fd) }
        let wrote = DispatchSemaphore(value: 0)
        let writeError = SharedCounter()
        channel.write(offset: 0, data: data, queue: queue) { done, _, error in
            if done {
                if error != 0 { writeError.increment() }
                wrote.signal()
            }
        }
        if wrote.wait(timeout: timeout) != .success { return "the write never finished" }
        if writeError.value != 0 { return "the write failed" }
        let received = SharedCounter(), wrong = SharedCounter()
        let read = DispatchSemaphore(value: 0)
        channel.read(offset: 0, length: Int.max, queue: queue) { done, data, _ in
            if let data {
                for _ in 0..<mismatches(data, from: received.value) { wrong.increment() }
                for _ in 0..<data.count { received.increment() }
            }
            if done { read.signal() }
        }
        if read.wait(timeout: timeout) != .success { return "the read never finished" }
        channel.close()
        if received.value != count { return "read \(received.value) of \(count) bytes" }
        return wrong.value == 0 ? nil : "\(wrong.value) bytes out of place"
    }

    harness.run("a stream channel reads a pipe to its end as the writer writes") {
        var fds: [Int32] = [-1, -1]
        if fds.withUnsafeMutableBufferPointer({ rl_pipe($0.baseAddress, 0) }) != 0 { return "pipe2 failed" }
        let readEnd = fds[0], writeEnd = fds[1]
        let queue = DispatchQueue(label: "checks.io.pipe")
        let channel = DispatchIO(type: .stream, fileDescriptor: readEnd, queue: queue) { _ in rl_close(readEnd) }
        let received = SharedCounter(), calls = SharedCounter(), wrong = SharedCounter()
        let done = DispatchSemaphore(value: 0)
        channel.read(offset: 0, length: Int.max, queue: queue) { finished, data, _ in
            calls.increment()
            if let data {
                for _ in 0..<mismatches(data, from: received.value) { wrong.increment() }
                for _ in 0..<data.count { received.increment() }
            }
            if finished { done.signal() }
        }
        let total = 200_000
        DispatchQueue.global().async {
            var block = [UInt8](repeating: 0, count: 10_000)
            var sent = 0
            while sent < total {
                for i in 0..<block.count { block[i] = pattern(sent + i) }
                let n = block.withUnsafeBytes { rl_fd_write(writeEnd, $0.baseAddress, UInt64($0.count)) }
                if n <= 0 { break }
                sent += Int(n)
                // After the first block, wait (bounded) until the reader has handed it to
                // the handler: data must come as it arrives, before the end.
                if sent == block.count {
                    let end = timeout
                    while received.value == 0 && DispatchTime.now() < end {
                        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(1))
                    }
                }
            }
            rl_close(writeEnd)
        }
        if done.wait(timeout: timeout) != .success { return "no EOF after \(received.value) bytes" }
        channel.close()
        if received.value != total { return "read \(received.value) of \(total) bytes" }
        if calls.value < 2 { return "no partial data before the end" }
        return wrong.value == 0 ? nil : "\(wrong.value) bytes out of place"
    }

    harness.run("close(.stop) ends a read waiting on a pipe with ECANCELED, then cleans up once") {
        var fds: [Int32] = [-1, -1]
        if fds.withUnsafeMutableBufferPointer({ rl_pipe($0.baseAddress, 0) }) != 0 { return "pipe2 failed" }
        let readEnd = fds[0], writeEnd = fds[1]
        let queue = DispatchQueue(label: "checks.io.stop")
        let cleanups = SharedCounter(), cancelled = SharedCounter()
        let cleaned = DispatchSemaphore(value: 0)
        let channel = DispatchIO(type: .stream, fileDescriptor: readEnd, queue: queue) { _ in
            cleanups.increment()
            rl_close(readEnd)
            cleaned.signal()
        }
        channel.read(offset: 0, length: 1 << 20, queue: queue) { done, _, error in
            if done && error == 125 { cancelled.increment() }  // ECANCELED
        }
        channel.close(flags: .stop)
        if cleaned.wait(timeout: timeout) != .success { return "the cleanup handler never ran" }
        rl_close(writeEnd)
        if cancelled.value != 1 { return "the read did not end with ECANCELED" }
        return cleanups.value == 1 ? nil : "cleanup ran \(cleanups.value) times"
    }
}
