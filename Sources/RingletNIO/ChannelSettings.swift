#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet

/// The options of a channel (on its loop): NIO's `ChannelOptions` that the channels of
/// this library act on, and socket options, kept until the socket exists and set on it
/// from then on. An option neither kind of channel takes is refused with
/// `ChannelError.operationUnsupported`, never ignored.
struct ChannelSettings {
    var autoRead = true
    var allowRemoteHalfClosure = false
    var waterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 32 * 1024, high: 64 * 1024)
    var connectTimeout: TimeAmount? = .seconds(10)
    var backlog: Int32 = 256
    var maxMessagesPerRead: UInt = 4
    var recvAllocator: RecvByteBufferAllocator = AdaptiveRecvByteBufferAllocator()
    var allocator = ByteBufferAllocator()
    /// Socket options by (level, name), in the order they were set.
    var socketOptions: [(level: Int32, name: Int32, value: Int32)] = []

    /// Sets `option`; a socket option also goes to `socket` when there is one.
    mutating func set<Option: ChannelOption>(_ option: Option, _ value: Option.Value, socket: RingSocket?) throws {
        switch option {
        case is ChannelOptions.Types.AutoReadOption: autoRead = value as! Bool
        case is ChannelOptions.Types.AllowRemoteHalfClosureOption: allowRemoteHalfClosure = value as! Bool
        case is ChannelOptions.Types.WriteBufferWaterMarkOption:
            waterMark = value as! ChannelOptions.Types.WriteBufferWaterMark
        case is ChannelOptions.Types.ConnectTimeoutOption: connectTimeout = value as? TimeAmount
        case is ChannelOptions.Types.BacklogOption: backlog = value as! Int32
        case is ChannelOptions.Types.MaxMessagesPerReadOption: maxMessagesPerRead = value as! UInt
        case is ChannelOptions.Types.RecvAllocatorOption: recvAllocator = value as! RecvByteBufferAllocator
        case is ChannelOptions.Types.AllocatorOption: allocator = value as! ByteBufferAllocator
        case is ChannelOptions.Types.WriteSpinOption: break  // the ring writes everything it is given
        case let socketOption as ChannelOptions.Types.SocketOption:
            let level = Int32(socketOption.optionLevel.rawValue)
            let name = Int32(socketOption.optionName.rawValue)
            let number = Int32(value as! SocketOptionValue)
            if let socket {
                do throws(SocketError) { try socket.setOption(level: level, name: name, number) } catch {
                    throw NIOErrors.io(error)
                }
            }
            socketOptions.removeAll { $0.level == level && $0.name == name }
            socketOptions.append((level, name, number))
        default:
            throw ChannelError.operationUnsupported
        }
    }

    /// The value of `option`: a socket option from the socket when there is one.
    func get<Option: ChannelOption>(_ option: Option, socket: RingSocket?) throws -> Option.Value {
        switch option {
        case is ChannelOptions.Types.AutoReadOption: return autoRead as! Option.Value
        case is ChannelOptions.Types.AllowRemoteHalfClosureOption: return allowRemoteHalfClosure as! Option.Value
        case is ChannelOptions.Types.WriteBufferWaterMarkOption: return waterMark as! Option.Value
        case is ChannelOptions.Types.ConnectTimeoutOption: return connectTimeout as! Option.Value
        case is ChannelOptions.Types.BacklogOption: return backlog as! Option.Value
        case is ChannelOptions.Types.MaxMessagesPerReadOption: return maxMessagesPerRead as! Option.Value
        case is ChannelOptions.Types.RecvAllocatorOption: return recvAllocator as! Option.Value
        case is ChannelOptions.Types.AllocatorOption: return allocator as! Option.Value
        case let socketOption as ChannelOptions.Types.SocketOption:
            let level = Int32(socketOption.optionLevel.rawValue)
            let name = Int32(socketOption.optionName.rawValue)
            if let socket {
                do throws(SocketError) {
                    return SocketOptionValue(try socket.option(level: level, name: name)) as! Option.Value
                } catch {
                    throw NIOErrors.io(error)
                }
            }
            let stored = socketOptions.last { $0.level == level && $0.name == name }?.value ?? 0
            return SocketOptionValue(stored) as! Option.Value
        default:
            throw ChannelError.operationUnsupported
        }
    }

    /// Sets the kept socket options on a socket just made.
    func apply(to socket: RingSocket) throws {
        for option in socketOptions {
            do throws(SocketError) { try socket.setOption(level: option.level, name: option.name, option.value) } catch {
                throw NIOErrors.io(error)
            }
        }
    }
}
#endif
