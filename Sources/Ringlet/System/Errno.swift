import CRinglet

/// An errno value with Swift names for the ones Ringlet acts on. The C boundary returns
/// `-errno`; `Errno(negated:)` turns that into a value.
public struct Errno: Error, Equatable, Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }
    init(negated result: Int32) { self.rawValue = -result }

    public static let notPermitted = Errno(rawValue: 1)              // EPERM
    public static let noSuchFile = Errno(rawValue: 2)                // ENOENT
    public static let noSuchProcess = Errno(rawValue: 3)             // ESRCH
    public static let interrupted = Errno(rawValue: 4)               // EINTR
    public static let ioError = Errno(rawValue: 5)                   // EIO
    public static let badFile = Errno(rawValue: 9)                   // EBADF
    public static let tryAgain = Errno(rawValue: 11)                 // EAGAIN
    public static let busy = Errno(rawValue: 16)                     // EBUSY
    public static let fileExists = Errno(rawValue: 17)               // EEXIST
    public static let noMemory = Errno(rawValue: 12)                 // ENOMEM
    public static let permissionDenied = Errno(rawValue: 13)         // EACCES
    public static let badAddress = Errno(rawValue: 14)               // EFAULT
    public static let isDirectory = Errno(rawValue: 21)              // EISDIR
    public static let invalidArgument = Errno(rawValue: 22)          // EINVAL
    public static let tooManyOpenFilesInSystem = Errno(rawValue: 23) // ENFILE (fs.file-max)
    public static let tooManyOpenFiles = Errno(rawValue: 24)         // EMFILE (RLIMIT_NOFILE)
    public static let fileTooLarge = Errno(rawValue: 27)             // EFBIG
    public static let noSpace = Errno(rawValue: 28)                  // ENOSPC
    public static let illegalSeek = Errno(rawValue: 29)              // ESPIPE (no offsets on a stream)
    public static let brokenPipe = Errno(rawValue: 32)               // EPIPE
    public static let notImplemented = Errno(rawValue: 38)           // ENOSYS
    public static let timeExpired = Errno(rawValue: 62)              // ETIME (io_uring timeouts)
    public static let notSupported = Errno(rawValue: 95)             // EOPNOTSUPP / ENOTSUP
    public static let timedOut = Errno(rawValue: 110)                // ETIMEDOUT
    public static let alreadyInProgress = Errno(rawValue: 114)       // EALREADY
    public static let cancelled = Errno(rawValue: 125)               // ECANCELED
    // Sockets (Net/):
    public static let nameTooLong = Errno(rawValue: 36)              // ENAMETOOLONG
    public static let notSocket = Errno(rawValue: 88)                // ENOTSOCK
    public static let messageTooLong = Errno(rawValue: 90)           // EMSGSIZE
    public static let addressInUse = Errno(rawValue: 98)             // EADDRINUSE
    public static let connectionAborted = Errno(rawValue: 103)       // ECONNABORTED
    public static let connectionReset = Errno(rawValue: 104)         // ECONNRESET
    public static let noBufferSpace = Errno(rawValue: 105)           // ENOBUFS
    public static let notConnected = Errno(rawValue: 107)            // ENOTCONN
    public static let connectionRefused = Errno(rawValue: 111)       // ECONNREFUSED
    public static let inProgress = Errno(rawValue: 115)              // EINPROGRESS

    /// The symbolic name (`"EPERM"`, `"EMFILE"`), or `"errno N"` for a value Linux
    /// does not define (such as 41 or 58, which it leaves unused, or one above 133).
    /// The names are the C library's (strerrorname_np(3)), so programs carry no table.
    public var name: String {
        if let name = rl_errno_name(rawValue) { return String(cString: name) }
        return "errno \(rawValue)"
    }
}
