import Glibc
@_spi(RingletNet) import Ringlet

/// Where a service listens: a Unix SOCK_SEQPACKET socket, in the file system or under
/// an abstract name.
public struct ServiceEndpoint: Sendable, CustomStringConvertible {
    enum Place: Sendable { case path(String), abstract(String) }
    let place: Place

    /// A socket file at `path`.
    public static func path(_ path: String) -> ServiceEndpoint { ServiceEndpoint(place: .path(path)) }

    /// An abstract socket (no file; gone with the listener's process).
    public static func abstract(_ name: String) -> ServiceEndpoint { ServiceEndpoint(place: .abstract(name)) }

    /// `name`'s socket file where a session's services live: `$XDG_RUNTIME_DIR/name`,
    /// else `/run/user/<uid>/name` when that folder exists, else `/run/name` for root,
    /// else `/tmp/ringlet-<uid>/name` (made, mode 0700).
    public static func named(_ name: String) -> ServiceEndpoint {
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty {
            return .path(runtime + "/" + name)
        }
        let uid = geteuid()
        if access("/run/user/\(uid)", W_OK) == 0 { return .path("/run/user/\(uid)/\(name)") }
        if uid == 0 { return .path("/run/" + name) }
        let folder = "/tmp/ringlet-\(uid)"
        mkdir(folder, 0o700)
        return .path(folder + "/" + name)
    }

    public var description: String {
        switch place {
        case .path(let path): return path
        case .abstract(let name): return "@" + name
        }
    }

    func address() throws(ServiceError) -> SocketAddress {
        do {
            switch place {
            case .path(let path): return try SocketAddress.unix(path: path)
            case .abstract(let name): return try SocketAddress.abstract(name)
            }
        } catch {
            throw .badEndpoint(description, reason: error.description)
        }
    }

    var filePath: String? {
        if case .path(let path) = place { return path }
        return nil
    }
}
