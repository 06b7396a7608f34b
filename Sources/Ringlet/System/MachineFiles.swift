import CRinglet

/// The Swift side of what board profiles read from the system: profile files,
/// sysfs and /proc entries, memory and page size, the kernel release, and the CPU
/// affinity that big.LITTLE placement sets.
enum MachineFiles {
    /// Profiles and sysfs entries are small; a longer file is refused rather than
    /// read in part (a profile cut in the middle would parse as something else).
    static let maximumFileBytes = 256 * 1024

    /// The bytes of the file at `path`. Throws the errno (ENOENT: no such file), or
    /// EFBIG (27) when the file is longer than `limit`.
    static func read(path: String, limit: Int = maximumFileBytes) throws(Errno) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var cPath = path.utf8CString
        let count = cPath.withUnsafeMutableBufferPointer { pathBuffer in
            buffer.withUnsafeMutableBufferPointer { bytes in
                rl_read_file(pathBuffer.baseAddress, bytes.baseAddress, Int64(limit + 1))
            }
        }
        if count < 0 { throw Errno(negated: Int32(truncatingIfNeeded: count)) }
        if count > Int64(limit) { throw Errno(rawValue: 27) }
        buffer.removeLast(buffer.count - Int(count))
        return buffer
    }

    /// Physical memory in MiB, or nil when sysconf cannot tell.
    static var memoryMegabytes: Int? {
        let bytes = rl_memory_bytes()
        return bytes <= 0 ? nil : Int(bytes >> 20)
    }

    static var pageBytes: Int { Int(rl_page_bytes()) }

    /// The running kernel's release, e.g. "6.1.0-18-arm64" (uname(2)), or "" when unknown.
    static var kernelRelease: String {
        var buffer = [CChar](repeating: 0, count: 128)
        let result = buffer.withUnsafeMutableBufferPointer { rl_kernel_release($0.baseAddress, Int32($0.count)) }
        if result != 0 { return "" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Pins the calling thread to `cpus`. Nil when done, else the errno.
    static func pinCurrentThread(to cpus: [Int]) -> Errno? {
        let values = cpus.map { Int32(truncatingIfNeeded: $0) }
        let result = values.withUnsafeBufferPointer { rl_thread_set_affinity($0.baseAddress, Int32($0.count)) }
        return result == 0 ? nil : Errno(negated: result)
    }

    /// The CPUs thread `tid` may run on, ascending, or nil when it cannot be read.
    static func affinity(ofThread tid: Int32) -> [Int]? {
        var cpus = [Int32](repeating: 0, count: 1024)
        let count = cpus.withUnsafeMutableBufferPointer { rl_thread_get_affinity(tid, $0.baseAddress, Int32($0.count)) }
        if count < 0 { return nil }
        return cpus.prefix(Int(count)).map { Int($0) }
    }
}
