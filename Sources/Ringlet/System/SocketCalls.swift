import CRinglet

/// The socket calls the socket layer (Net/) makes at once — making, binding, options,
/// addresses — and Linux's numbers for them (ringlet_net.c checks them against its
/// headers). Each call returns its result or -errno, as the C boundary does; the
/// requests that wait go on the ring instead (SocketCall.swift).
enum SocketCalls {
    static let unixFamily = RL_AF_UNIX
    static let inetFamily = RL_AF_INET
    static let inet6Family = RL_AF_INET6
    static let streamType = RL_SOCK_STREAM
    static let datagramType = RL_SOCK_DGRAM
    static let seqpacketType = RL_SOCK_SEQPACKET
    static let shutRead = RL_SHUT_RD
    static let shutWrite = RL_SHUT_WR
    static let shutBoth = RL_SHUT_RDWR
    static let socketLevel = RL_SOL_SOCKET
    static let rights = RL_SCM_RIGHTS
    static let credentials = RL_SCM_CREDENTIALS
    static let reuseAddress = RL_SO_REUSEADDR
    static let sendBuffer = RL_SO_SNDBUF
    static let receiveBuffer = RL_SO_RCVBUF
    static let keepAlive = RL_SO_KEEPALIVE
    static let passCredentials = RL_SO_PASSCRED
    static let tcpLevel = RL_IPPROTO_TCP
    static let tcpNoDelay = RL_TCP_NODELAY
    static let messageTruncated = RL_MSG_TRUNC
    static let controlTruncated = RL_MSG_CTRUNC
    static let credentialsBytes = Int(RL_CREDENTIALS_BYTES)
    /// A completion's flags: it carries a provided buffer, whose id is above this shift.
    static let bufferFlag = RL_CQE_F_BUFFER
    static let bufferShift = UInt32(RL_CQE_BUFFER_SHIFT)

    static func open(family: Int32, type: Int32) -> Int32 { rl_socket_open(family, type) }

    static func makeNonBlocking(_ fd: Int32) -> Int32 { rl_socket_make_nonblocking(fd) }

    static func pair(type: Int32) -> (result: Int32, first: Int32, second: Int32) {
        var first: Int32 = -1, second: Int32 = -1
        let r = rl_socket_pair(type, &first, &second)
        return (r, first, second)
    }

    static func bind(_ fd: Int32, to address: [UInt8]) -> Int32 {
        address.withUnsafeBytes { rl_socket_bind(fd, $0.baseAddress, UInt32($0.count)) }
    }

    static func listen(_ fd: Int32, backlog: Int32) -> Int32 { rl_socket_listen(fd, backlog) }

    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) -> Int32 {
        rl_socket_set_int_option(fd, level, name, value)
    }

    static func option(_ fd: Int32, level: Int32, name: Int32) -> (result: Int32, value: Int32) {
        var value: Int32 = 0
        let r = rl_socket_get_int_option(fd, level, name, &value)
        return (r, value)
    }

    static func shutdown(_ fd: Int32, how: Int32) -> Int32 { rl_socket_shutdown(fd, how) }

    /// getsockname(2) / getpeername(2): the address's bytes.
    static func localAddress(_ fd: Int32) throws(Errno) -> [UInt8] {
        try address { rl_socket_local_address(fd, $0, $1) }
    }

    static func peerAddress(_ fd: Int32) throws(Errno) -> [UInt8] {
        try address { rl_socket_peer_address(fd, $0, $1) }
    }

    /// SO_PEERCRED.
    static func peerCredentials(_ fd: Int32) -> (result: Int32, pid: Int32, uid: UInt32, gid: UInt32) {
        var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        let r = rl_socket_peer_credentials(fd, &pid, &uid, &gid)
        return (r, pid, uid, gid)
    }

    /// This process's `struct ucred`, as SCM_CREDENTIALS carries it.
    static func ownCredentials() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: credentialsBytes)
        bytes.withUnsafeMutableBytes { rl_socket_own_credentials($0.baseAddress) }
        return bytes
    }

    /// A numeric IPv4 or IPv6 address and port.
    static func inetAddress(_ host: String, port: Int) throws(Errno) -> [UInt8] {
        try address { rl_address_inet(host, Int32(truncatingIfNeeded: port), $0, $1) }
    }

    /// A Unix address: a filesystem path or an abstract name.
    static func unixAddress(_ name: [UInt8], abstract: Bool) throws(Errno) -> [UInt8] {
        var bytes = name
        let count = UInt32(bytes.count)
        return try address { storage, length in
            bytes.withUnsafeMutableBytes {
                rl_address_unix($0.baseAddress?.assumingMemoryBound(to: CChar.self), count, abstract ? 1 : 0, storage,
                                length)
            }
        }
    }

    static func family(_ address: [UInt8]) -> Int32 {
        address.withUnsafeBytes { rl_address_family($0.baseAddress, UInt32($0.count)) }
    }

    /// The port of an IP address, or -errno.
    static func port(_ address: [UInt8]) -> Int32 {
        address.withUnsafeBytes { rl_address_port($0.baseAddress, UInt32($0.count)) }
    }

    static func host(_ address: [UInt8]) -> String? {
        var text = [CChar](repeating: 0, count: 64)
        let r = address.withUnsafeBytes { rl_address_host($0.baseAddress, UInt32($0.count), &text, 64) }
        return r < 0 ? nil : string(text)
    }

    static func unixName(_ address: [UInt8]) -> (name: String, abstract: Bool)? {
        var text = [CChar](repeating: 0, count: 112)
        var abstract: Int32 = 0
        let r = address.withUnsafeBytes { rl_address_unix_path($0.baseAddress, UInt32($0.count), &text, 112, &abstract) }
        return r < 0 ? nil : (string(text), abstract != 0)
    }

    /// sendmsg(2) that never waits (MSG_DONTWAIT | MSG_NOSIGNAL): bytes taken, or -errno.
    static func sendNow(_ fd: Int32, _ message: SocketMessage) -> Int64 {
        if let injected = SyscallFaults.take(.transferNow) { return Int64(-injected.rawValue) }
        return rl_socket_sendmsg_now(fd, message.header)
    }

    /// CMSG_SPACE(bytes).
    static func controlSpace(_ bytes: Int) -> Int { Int(rl_control_space(UInt32(truncatingIfNeeded: bytes))) }

    /// Fills an address with `fill(storage, &length)`, which returns 0 or -errno.
    private static func address(_ fill: (UnsafeMutableRawPointer, UnsafeMutablePointer<UInt32>) -> Int32) throws(Errno) -> [UInt8] {
        var storage = [UInt8](repeating: 0, count: Int(RL_ADDRESS_BYTES))
        var length: UInt32 = 0
        let r = storage.withUnsafeMutableBytes { fill($0.baseAddress.unsafelyUnwrapped, &length) }
        if r < 0 { throw Errno(negated: r) }
        return Array(storage.prefix(Int(length)))
    }

    /// The UTF-8 text before the first NUL.
    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
