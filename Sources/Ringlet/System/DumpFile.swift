import CRinglet

/// Where a dump asked for by a signal goes besides stderr, so that `ringlet dump <pid>`
/// can read it (Reliability, "Observing"): `/tmp/ringlet-dump-<pid>.txt`, written
/// whole (a temporary, then a rename) and readable by the owner only.
enum DumpFile {
    static func path(processID: Int32) -> String { "/tmp/ringlet-dump-\(processID).txt" }

    /// Writes `text` to `path`, replacing what was there; nil or the errno.
    static func write(_ text: String, to path: String) -> Errno? {
        if let injected = SyscallFaults.take(.open) { return injected }
        var cPath = path.utf8CString
        var bytes = text.utf8CString
        let result = cPath.withUnsafeMutableBufferPointer { pathBuffer in
            bytes.withUnsafeMutableBufferPointer { buffer in
                rl_write_file_replacing(pathBuffer.baseAddress, buffer.baseAddress, Int64(buffer.count - 1))
            }
        }
        return result == 0 ? nil : Errno(negated: result)
    }
}
