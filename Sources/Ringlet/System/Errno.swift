/// An errno value with Swift names for the ones Ringlet acts on. The C boundary returns
/// `-errno`; `Errno(negated:)` turns that into a value.
public struct Errno: Error, Equatable, Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }
    init(negated result: Int32) { self.rawValue = -result }

    public static let notPermitted = Errno(rawValue: 1)      // EPERM
    public static let noSuchFile = Errno(rawValue: 2)        // ENOENT
    public static let noSuchProcess = Errno(rawValue: 3)     // ESRCH
    public static let interrupted = Errno(rawValue: 4)       // EINTR
    public static let ioError = Errno(rawValue: 5)           // EIO
    public static let badFile = Errno(rawValue: 9)           // EBADF
    public static let tryAgain = Errno(rawValue: 11)         // EAGAIN
    public static let busy = Errno(rawValue: 16)             // EBUSY
    public static let noMemory = Errno(rawValue: 12)         // ENOMEM
    public static let permissionDenied = Errno(rawValue: 13) // EACCES
    public static let invalidArgument = Errno(rawValue: 22)  // EINVAL
    public static let notImplemented = Errno(rawValue: 38)   // ENOSYS
    public static let timeExpired = Errno(rawValue: 62)      // ETIME (io_uring timeouts)
    public static let timedOut = Errno(rawValue: 110)        // ETIMEDOUT
    public static let cancelled = Errno(rawValue: 125)       // ECANCELED

    /// The symbolic name (`"EPERM"`), or `"errno N"` for values Ringlet has no name for.
    public var name: String {
        switch rawValue {
        case 1: return "EPERM"
        case 2: return "ENOENT"
        case 3: return "ESRCH"
        case 4: return "EINTR"
        case 5: return "EIO"
        case 9: return "EBADF"
        case 11: return "EAGAIN"
        case 16: return "EBUSY"
        case 12: return "ENOMEM"
        case 13: return "EACCES"
        case 22: return "EINVAL"
        case 38: return "ENOSYS"
        case 62: return "ETIME"
        case 110: return "ETIMEDOUT"
        case 125: return "ECANCELED"
        default: return "errno \(rawValue)"
        }
    }
}
