/// A socket address: IPv4 or IPv6 with a port, or an AF_UNIX path or abstract name.
/// The bytes are the kernel's `struct sockaddr`, as bind(2) and connect(2) take them.
@_spi(RingletNet)
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    /// The sockaddr's bytes, exactly its length.
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The address families (Linux's numbers): what `family` returns and `RingSocket.open` takes.
    public static let unixFamily = SocketCalls.unixFamily
    public static let inetFamily = SocketCalls.inetFamily
    public static let inet6Family = SocketCalls.inet6Family

    /// A numeric IPv4 (`"127.0.0.1"`) or IPv6 (`"::1"`) address and a port (0: any,
    /// for a listener). No name lookup: a host name is refused.
    public static func ip(_ host: String, port: Int) throws(SocketError) -> SocketAddress {
        do throws(Errno) {
            return SocketAddress(bytes: try SocketCalls.inetAddress(host, port: port))
        } catch {
            throw SocketError(error, call: "address", subject: "\(host) port \(port)",
                              advice: "give a numeric IPv4 or IPv6 address and a port from 0 to 65535")
        }
    }

    /// An AF_UNIX address at a filesystem path (at most 107 bytes).
    public static func unix(path: String) throws(SocketError) -> SocketAddress {
        try unixAddress(path, abstract: false)
    }

    /// An AF_UNIX address in the abstract namespace (no file; gone with its last socket).
    public static func abstract(_ name: String) throws(SocketError) -> SocketAddress {
        try unixAddress(name, abstract: true)
    }

    private static func unixAddress(_ name: String, abstract: Bool) throws(SocketError) -> SocketAddress {
        let utf8 = Array(name.utf8)
        do throws(Errno) {
            return SocketAddress(bytes: try SocketCalls.unixAddress(utf8, abstract: abstract))
        } catch {
            throw SocketError(error, call: "address", subject: abstract ? "@\(name)" : name,
                              advice: error == .nameTooLong
                                  ? "a Unix socket's name takes 1 to 107 bytes: use a shorter path (a directory under $XDG_RUNTIME_DIR or /run)"
                                  : "a Unix socket's path may not hold a NUL byte")
        }
    }

    /// `unixFamily`, `inetFamily` or `inet6Family`.
    public var family: Int32 { SocketCalls.family(bytes) }

    /// The port of an IP address (nil for a Unix one).
    public var port: Int? {
        let port = SocketCalls.port(bytes)
        return port < 0 ? nil : Int(port)
    }

    /// The host of an IP address as text (nil for a Unix one).
    public var host: String? { SocketCalls.host(bytes) }

    /// The path or abstract name of a Unix address ("" when unnamed), and which it is.
    public var unixName: (name: String, abstract: Bool)? { SocketCalls.unixName(bytes) }

    /// `127.0.0.1:8080`, `[::1]:80`, `unix:/run/x.sock`, `unix:@name`, `unix:(unnamed)`.
    public var description: String {
        if let host, let port { return family == Self.inet6Family ? "[\(host)]:\(port)" : "\(host):\(port)" }
        if let unix = unixName {
            return unix.name.isEmpty && !unix.abstract ? "unix:(unnamed)" : "unix:\(unix.abstract ? "@" : "")\(unix.name)"
        }
        return "address of family \(family)"
    }
}
