import CRinglet

/// The kernel's pressure-stall information for memory (PSI, Linux 4.20+): which file
/// speaks for this process, its running totals, and triggers on it. Any thread.
enum PressureFiles {
    /// The memory pressure file for this process: its cgroup's own (cgroup v2
    /// `memory.pressure`) where it has one, else the system-wide `/proc/pressure/memory`;
    /// nil when the kernel has no PSI.
    static func memoryFile() -> String? {
        if SyscallFaults.take(.pressureRead) != nil { return nil }
        if let own = cgroupMemoryFile(), (try? MachineFiles.read(path: own)) != nil { return own }
        if (try? MachineFiles.read(path: systemMemoryFile)) != nil { return systemMemoryFile }
        return nil
    }

    static let systemMemoryFile = "/proc/pressure/memory"

    /// `/sys/fs/cgroup<path>/memory.pressure` for the cgroup v2 entry ("0::<path>") of
    /// /proc/self/cgroup; nil on cgroup v1 only, or at the root (whose file is the
    /// system's).
    private static func cgroupMemoryFile() -> String? {
        guard let bytes = try? MachineFiles.read(path: "/proc/self/cgroup") else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("0::".utf8)) {
            // Bytes, not String comparison: Embedded Swift has no Unicode tables for it.
            let path = line.dropFirst(3)
            if path.isEmpty || path.elementsEqual([UInt8(ascii: "/")]) { return nil }
            return "/sys/fs/cgroup" + String(decoding: path, as: UTF8.self) + "/memory.pressure"
        }
        return nil
    }

    /// The stall totals in µs: `some` (at least one task stalled on memory) and `full`
    /// (every non-idle task stalled at once).
    struct Totals: Equatable {
        var some: UInt64
        var full: UInt64
    }

    /// Reads `path`'s totals. Throws the errno of the read (ENOENT, EOPNOTSUPP when PSI
    /// is turned off with psi=0), or EINVAL for text without both lines.
    static func totals(_ path: String) throws(Errno) -> Totals {
        if let fault = SyscallFaults.take(.pressureRead) { throw fault }
        let bytes: [UInt8]
        do throws(MachineFiles.ReadError) {
            bytes = try MachineFiles.read(path: path, limit: 4096)
        } catch {
            if case .failed(let errno) = error { throw errno }
            throw .invalidArgument
        }
        guard let totals = parse(bytes) else { throw .invalidArgument }
        return totals
    }

    /// The totals in a pressure file's text (`some avg10=… total=N` and `full … total=N`).
    static func parse(_ bytes: [UInt8]) -> Totals? {
        var some: UInt64?, full: UInt64?
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            guard let equals = line.lastIndex(of: UInt8(ascii: "=")),
                  line[line.startIndex..<equals].reversed().starts(with: Array("total".utf8).reversed()),
                  let value = UInt64(String(decoding: line[(equals + 1)...], as: UTF8.self)) else { continue }
            if line.starts(with: Array("some ".utf8)) { some = value }
            if line.starts(with: Array("full ".utf8)) { full = value }
        }
        guard let some, let full else { return nil }
        return Totals(some: some, full: full)
    }

    /// A trigger on `path`: fires when `full` (else `some`) stall reaches
    /// `stallMicroseconds` within a `windowMicroseconds` window. The descriptor signals
    /// POLLPRI; close it to remove the trigger.
    static func trigger(_ path: String, full: Bool, stallMicroseconds: Int,
                        windowMicroseconds: Int) throws(Errno) -> Int32 {
        if let fault = SyscallFaults.take(.pressureTrigger) { throw fault }
        var cPath = path.utf8CString
        var text = "\(full ? "full" : "some") \(stallMicroseconds) \(windowMicroseconds)".utf8CString
        let fd = cPath.withUnsafeMutableBufferPointer { pathBytes in
            text.withUnsafeMutableBufferPointer { rl_psi_trigger(pathBytes.baseAddress, $0.baseAddress) }
        }
        if fd < 0 { throw Errno(negated: fd) }
        return fd
    }

    /// POLLPRI: a trigger fired.
    static let triggered = RL_POLLPRI
}
