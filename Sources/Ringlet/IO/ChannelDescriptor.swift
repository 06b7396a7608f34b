
/// A descriptor shared by the channels made from one another; closed when the last
/// of them is done with it, if a channel opened it.
// @unchecked Sendable: `users` under `lock`; the rest is immutable.
final class ChannelDescriptor: @unchecked Sendable {
    let fd: Int32
    /// The device and inode `fd` named when the first channel was made (nil: not
    /// open). A number closed and reused for another file names another pair.
    let identity: (device: UInt64, inode: UInt64)?
    private let owned: Bool
    private let lock = FutexLock()
    private var users = 1

    init(fd: Int32, owned: Bool) {
        self.fd = fd
        self.owned = owned
        identity = fd >= 0 ? Descriptors.identity(fd) : nil
    }

    /// Whether `fd` still names the file it named at creation (one fstat(2)).
    var stillNamesItsFile: Bool {
        guard let identity else { return true }  // never open: requests fail with EBADF anyway
        guard let now = Descriptors.identity(fd) else { return false }
        return now == identity
    }

    deinit { lock.deallocate() }

    /// Another channel uses the descriptor.
    func share() { lock.withLock { users += 1 } }

    /// A channel's cleanup ran; the last one closes a descriptor the channel opened.
    func channelDone() {
        let last = lock.withLock { () -> Bool in
            users -= 1
            return users == 0
        }
        if last && owned && fd >= 0 { Descriptors.close(fd) }
    }
}
