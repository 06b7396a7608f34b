#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet

/// NIO's socket addresses and the runtime's, both ways.
enum SocketAddresses {
    /// The runtime's form of an NIO address: IPv4, IPv6 or a Unix path.
    static func ringlet(_ address: NIOCore.SocketAddress) throws -> Ringlet.SocketAddress {
        do throws(SocketError) {
            switch address {
            case .v4, .v6:
                guard let host = address.ipAddress, let port = address.port else { break }
                return try Ringlet.SocketAddress.ip(host, port: port)
            case .unixDomainSocket:
                guard let path = address.pathname else { break }
                return try Ringlet.SocketAddress.unix(path: path)
            }
        } catch {
            throw NIOErrors.io(error)
        }
        throw ChannelError.operationUnsupported
    }

    /// NIO's form of a runtime address (nil for an abstract Unix name, which NIO has no form for).
    static func nio(_ address: Ringlet.SocketAddress) -> NIOCore.SocketAddress? {
        if let host = address.host, let port = address.port {
            return try? NIOCore.SocketAddress(ipAddress: host, port: port)
        }
        if let unix = address.unixName, !unix.abstract {
            return try? NIOCore.SocketAddress(unixDomainSocketPath: unix.name)
        }
        return nil
    }
}

/// The runtime's socket failures as NIO's errors.
enum NIOErrors {
    /// An `IOError` with the errno and the runtime's whole message (the call, the socket
    /// and its addresses, what to do).
    static func io(_ error: SocketError) -> IOError {
        IOError(errnoCode: error.errno.rawValue, reason: error.description)
    }

    /// A request's failure as a channel reports it: a cancellation (the channel's own
    /// close cut it) is `ChannelError.ioOnClosedChannel`.
    static func channel(_ error: SocketError) -> any Error {
        error.isCancellation ? ChannelError.ioOnClosedChannel : io(error)
    }
}
#endif
