import CRinglet

/// A message header (`rl_message`: msghdr, iovecs, control buffer, address) that a
/// socket request owns until its completion is back (Net/SocketRequest.swift).
final class SocketMessage {
    let header: OpaquePointer

    /// Room for `buffers` iovecs and `controlBytes` of control data (CMSG_SPACE of
    /// it). Out of memory (as any allocation of Swift's), the process stops with a
    /// message naming the socket.
    init(buffers: Int, controlBytes: Int, for socket: String) {
        guard let header = rl_message_create(UInt32(truncatingIfNeeded: max(buffers, 1)),
                                             UInt32(truncatingIfNeeded: max(controlBytes, 0))) else {
            writeToStandardError("Ringlet: out of memory for a message header of \(socket) "
                + "(\(buffers) buffers, \(controlBytes) bytes of control room)")
            rl_abort()
        }
        self.header = header
    }

    deinit { rl_message_destroy(header) }

    /// Empty again: no buffers, no control data.
    func reset() { rl_message_reset(header) }

    func add(_ base: UnsafeMutableRawPointer, count: Int) {
        _ = rl_message_add_buffer(header, base, UInt64(count))
    }

    /// Adds a control message to send; false when the message has no room left for it.
    func addControl(level: Int32, type: Int32, data: [UInt8]) -> Bool {
        data.withUnsafeBytes { rl_message_add_control(header, level, type, $0.baseAddress, UInt32($0.count)) == 0 }
    }

    var remaining: Int { Int(rl_message_remaining(header)) }
    func consume(_ bytes: Int) { rl_message_consume(header, UInt64(bytes)) }
    func dropControl() { rl_message_drop_control(header) }
    var flags: Int32 { rl_message_flags(header) }

    /// The control messages a receive brought: level, type and bytes of each.
    var receivedControl: [(level: Int32, type: Int32, data: [UInt8])] {
        var messages: [(level: Int32, type: Int32, data: [UInt8])] = []
        var cursor: UInt32 = 0, level: Int32 = 0, type: Int32 = 0, length: UInt32 = 0
        var data: UnsafeRawPointer?
        while rl_message_next_control(header, &cursor, &level, &type, &data, &length) == 1 {
            let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            messages.append((level, type, bytes))
        }
        return messages
    }

    /// The sender's address a receive brought, as bytes (nil: none, a connected socket).
    var senderAddress: [UInt8]? {
        var storage = [UInt8](repeating: 0, count: Int(RL_ADDRESS_BYTES))
        let length = storage.withUnsafeMutableBytes { rl_message_address(header, $0.baseAddress) }
        return length == 0 ? nil : Array(storage.prefix(Int(length)))
    }
}
