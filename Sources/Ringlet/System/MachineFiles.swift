import CRinglet

/// The Swift side of what board profiles read from the system: profile files,
/// sysfs and /proc entries, memory and page size, the kernel release, and the CPU
/// affinity that big.LITTLE placement sets.
enum MachineFiles {
    /// Profiles and sysfs entries are small; a longer file is refused rather than
    /// read in part (a profile cut in the middle would parse as something else).
    static let maximumFileBytes = 256 * 1024

    /// Why a file could not be read.
    enum ReadError: Error {
        /// open(2) or read(2) failed (ENOENT: no such file).
        case failed(Errno)
        /// The file is longer than the limit asked for.
        case tooLong(limit: Int)
        /// Not a regular file: "a FIFO", "a directory", "a character device"... It
        /// was not opened, or opened without blocking, so reading never hangs.
        case notRegular(String)
    }

    /// The bytes of the regular file at `path` (profiles, sysfs and /proc entries are
    /// regular files). Never blocks: a FIFO, device, directory or socket is refused
    /// with `.notRegular`, a file longer than `limit` with `.tooLong`.
    static func read(path: String, limit: Int = maximumFileBytes) throws(ReadError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var cPath = path.utf8CString
        let count = cPath.withUnsafeMutableBufferPointer { pathBuffer in
            buffer.withUnsafeMutableBufferPointer { bytes in
                rl_read_file(pathBuffer.baseAddress, bytes.baseAddress, Int64(limit + 1))
            }
        }
        if count <= -Int64(RL_NOT_REGULAR_FILE) {
            throw .notRegular(fileType(Int32(truncatingIfNeeded: -count - Int64(RL_NOT_REGULAR_FILE))))
        }
        if count < 0 { throw .failed(Errno(negated: Int32(truncatingIfNeeded: count))) }
        if count > Int64(limit) { throw .tooLong(limit: limit) }
        buffer.removeLast(buffer.count - Int(count))
        return buffer
    }

    /// What a file of type `type` (RL_FILE_TYPE_*) is, with its article.
    private static func fileType(_ type: Int32) -> String {
        switch type {
        case RL_FILE_TYPE_FIFO: return "a FIFO"
        case RL_FILE_TYPE_CHARACTER_DEVICE: return "a character device"
        case RL_FILE_TYPE_DIRECTORY: return "a directory"
        case RL_FILE_TYPE_BLOCK_DEVICE: return "a block device"
        case RL_FILE_TYPE_SYMBOLIC_LINK: return "a symbolic link"
        case RL_FILE_TYPE_SOCKET: return "a socket"
        default: return "not a regular file (type \(type))"
        }
    }

    /// The whitespace-separated words of the small file at `path` (a sysctl, /proc
    /// entry or cgroup file), or nil when it cannot be read.
    static func words(atPath path: String) -> [ArraySlice<UInt8>]? {
        guard let bytes = try? read(path: path, limit: 4096) else { return nil }
        return bytes.split(whereSeparator: { $0 == 32 || $0 == 9 || $0 == 10 })
    }

    /// `word` as a non-negative decimal number, or nil ("max" in a cgroup file is nil).
    static func decimal(_ word: ArraySlice<UInt8>) -> Int? {
        if word.isEmpty || word.count > 18 { return nil }
        var value = 0
        for byte in word {
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }

    /// The number that is the first word of the file at `path`, or nil.
    static func number(atPath path: String) -> Int? {
        words(atPath: path)?.first.flatMap { decimal($0) }
    }

    // MARK: Limits

    /// A resource limit of this process (getrlimit(2)): soft and hard, nil for
    /// unlimited; nil when it cannot be read.
    static func resourceLimit(_ resource: ResourceLimit) -> (soft: Int?, hard: Int?)? {
        var soft: UInt64 = 0, hard: UInt64 = 0
        if rl_resource_limit(resource.rawValue, &soft, &hard) != 0 { return nil }
        func value(_ raw: UInt64) -> Int? { raw >= UInt64(Int.max) ? nil : Int(raw) }
        return (value(soft), value(hard))
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

/// The resource limits (getrlimit(2)) the runtime's messages name.
enum ResourceLimit {
    case addressSpace, stack, threads, openFiles

    var rawValue: Int32 {
        switch self {
        case .addressSpace: return RL_LIMIT_ADDRESS_SPACE
        case .stack: return RL_LIMIT_STACK
        case .threads: return RL_LIMIT_THREADS
        case .openFiles: return RL_LIMIT_OPEN_FILES
        }
    }
}
