import CRinglet

/// The calls the runtime makes on file descriptors: opening a DispatchIO path, what
/// a descriptor is and where it stands, how many bytes wait on it, whether it is
/// ready, and whether its number still names the same file. Each consults the fault
/// hook (`SyscallFaults`) first, retries EINTR where the call can see it, and throws
/// the errno otherwise.
enum Descriptors {
    /// open(2) of a NUL-terminated path, with O_CLOEXEC; EINTR (a signal during a
    /// slow open) is retried.
    static func open(_ path: UnsafePointer<CChar>, flags: Int32, mode: UInt32) throws(Errno) -> Int32 {
        while true {
            let result: Int32
            if let injected = SyscallFaults.take(.open) {
                result = -injected.rawValue
            } else {
                result = rl_open(path, flags, mode)
            }
            if result >= 0 { return result }
            let error = Errno(negated: result)
            if error != .interrupted { throw error }
        }
    }

    /// close(2). Errors are ignored: after close the number is free whatever it said
    /// (Linux never retries a close that reported EINTR).
    static func close(_ fd: Int32) { rl_close(fd) }

    /// 0 when `fd` is an open descriptor (fcntl F_GETFD).
    static func isOpen(_ fd: Int32) -> Bool { rl_fd_check(fd) == 0 }

    /// fstat(2): the file's size and link count.
    static func status(_ fd: Int32) throws(Errno) -> (size: Int64, links: Int64) {
        if let injected = SyscallFaults.take(.fstat) { throw injected }
        var size: Int64 = 0, links: Int64 = 0
        let result = rl_fd_stat(fd, &size, &links)
        if result != 0 { throw Errno(negated: result) }
        return (size, links)
    }

    /// The device and inode `fd` names, which tell whether the number still names the
    /// same file (a closed and reused number names another); nil when it names none.
    static func identity(_ fd: Int32) -> (device: UInt64, inode: UInt64)? {
        if SyscallFaults.take(.fstat) != nil { return nil }
        var device: UInt64 = 0, inode: UInt64 = 0
        return rl_fd_identity(fd, &device, &inode) == 0 ? (device, inode) : nil
    }

    /// What a DispatchIO channel's descriptor is: a regular file (offsets work) or a
    /// stream, its current offset, and whether it was opened with O_APPEND.
    static func describe(_ fd: Int32) throws(Errno) -> (regularFile: Bool, position: Int64, appends: Bool) {
        if let injected = SyscallFaults.take(.fstat) { throw injected }
        var kind: Int32 = 0, position: Int64 = 0, append: Int32 = 0
        let result = rl_fd_describe(fd, &kind, &position, &append)
        if result != 0 { throw Errno(negated: result) }
        return (kind == Int32(RL_FD_REGULAR), position, append != 0)
    }

    /// The descriptor's current offset (lseek(fd, 0, SEEK_CUR)).
    static func position(_ fd: Int32) throws(Errno) -> Int64 {
        if let injected = SyscallFaults.take(.seek) { throw injected }
        let result = rl_fd_position(fd)
        if result < 0 { throw Errno(negated: Int32(truncatingIfNeeded: result)) }
        return result
    }

    /// Moves the descriptor's offset to `position` (lseek(fd, position, SEEK_SET)).
    static func seek(_ fd: Int32, to position: Int64) throws(Errno) {
        if let injected = SyscallFaults.take(.seek) { throw injected }
        let result = rl_fd_seek(fd, position)
        if result != 0 { throw Errno(negated: result) }
    }

    /// Bytes waiting to be read from `fd` (FIONREAD).
    static func readableBytes(_ fd: Int32) throws(Errno) -> Int {
        if let injected = SyscallFaults.take(.byteCount) { throw injected }
        let result = rl_fd_readable_bytes(fd)
        if result < 0 { throw Errno(negated: Int32(truncatingIfNeeded: result)) }
        return Int(result)
    }

    /// Bytes that can be written to a pipe or socket without blocking.
    static func writableBytes(_ fd: Int32) throws(Errno) -> Int {
        if let injected = SyscallFaults.take(.byteCount) { throw injected }
        let result = rl_fd_writable_bytes(fd)
        if result < 0 { throw Errno(negated: Int32(truncatingIfNeeded: result)) }
        return Int(result)
    }

    /// The events among `events` (RL_POLLIN, RL_POLLOUT) ready on `fd` right now —
    /// poll(2) without waiting — plus POLLERR, POLLHUP or POLLNVAL; 0 when none.
    /// EINTR is retried.
    static func readyEvents(_ fd: Int32, _ events: UInt32) throws(Errno) -> UInt32 {
        while true {
            let result: Int32
            if let injected = SyscallFaults.take(.pollNow) {
                result = -injected.rawValue
            } else {
                result = rl_fd_poll_now(fd, events)
            }
            if result >= 0 { return UInt32(result) }
            let error = Errno(negated: result)
            if error != .interrupted { throw error }
        }
    }

    /// poll(2) events: data to read (or end of file), room to write, and POLLNVAL
    /// (the descriptor is not open).
    static let readable = RL_POLLIN
    static let writable = RL_POLLOUT
    static let notOpen: UInt32 = 0x20
}
