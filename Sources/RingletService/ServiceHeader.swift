@_spi(RingletNet) import Ringlet

/// The 32 bytes in front of every packet on a service connection (little-endian):
///
///     0   magic "RLS1"        4   kind             5   QoS class   6   relative priority
///     7   zero                8   message id (UInt64; a reply carries its request's)
///     16  sending thread id   20  sender's activity
///     24  payload bytes       28  zero
///
/// The QoS and the thread id are the sender's claim (`SenderCheck` checks it against
/// the kernel's word on the sending process); the activity lets a trace follow the hop.
struct ServiceHeader: Equatable {
    enum Kind: UInt8 {
        /// A message that wants no reply.
        case message = 1
        /// A message that wants one reply.
        case request = 2
        /// The reply to request `id`.
        case reply = 3
        /// Request `id` got no reply: the payload says why (UTF-8).
        case failure = 4
    }

    static let size = 32
    static let magic: UInt32 = 0x3153_4C52  // "RLS1" in memory order

    var kind: Kind
    var qos: DispatchQoS
    var id: UInt64
    var threadID: Int32
    var activity: UInt32
    var payloadBytes: UInt32

    /// The header's bytes, then `payload`, as one packet.
    func packet(with payload: DispatchData) -> DispatchData {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        Self.store(Self.magic, at: 0, in: &bytes)
        bytes[4] = kind.rawValue
        bytes[5] = ServiceQoS.code(of: qos.qosClass)
        bytes[6] = UInt8(bitPattern: Int8(qos.relativePriority))
        Self.store(UInt32(truncatingIfNeeded: id), at: 8, in: &bytes)
        Self.store(UInt32(truncatingIfNeeded: id >> 32), at: 12, in: &bytes)
        Self.store(UInt32(bitPattern: threadID), at: 16, in: &bytes)
        Self.store(activity, at: 20, in: &bytes)
        Self.store(payloadBytes, at: 24, in: &bytes)
        var packet = bytes.withUnsafeBytes { DispatchData(bytes: $0) }
        packet.append(payload)
        return packet
    }

    /// Reads a packet's header; the reason when it is not one (`ServiceError.malformed`).
    static func parse(_ packet: DispatchData) -> Result<ServiceHeader, MalformedPacket> {
        guard packet.count >= size else { return .failure(.init("a packet of \(packet.count) bytes, shorter than the \(size)-byte header")) }
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { packet.copyBytes(to: $0, count: size) }
        let magic = load(at: 0, in: bytes)
        guard magic == Self.magic else {
            return .failure(.init("a packet that does not start with RLS1 (it starts with 0x\(String(magic, radix: 16))): not a Ringlet service peer"))
        }
        guard let kind = Kind(rawValue: bytes[4]) else { return .failure(.init("an unknown packet kind \(bytes[4])")) }
        guard let qosClass = ServiceQoS.qosClass(code: bytes[5]) else {
            return .failure(.init("an unknown QoS class code \(bytes[5])"))
        }
        let relative = Int(Int8(bitPattern: bytes[6]))
        guard (-15...0).contains(relative), bytes[7] == 0, load(at: 28, in: bytes) == 0 else {
            return .failure(.init("a header with a relative priority of \(relative) or reserved bytes set"))
        }
        let payloadBytes = load(at: 24, in: bytes)
        guard Int(payloadBytes) == packet.count - size else {
            return .failure(.init("a header announcing \(payloadBytes) payload bytes in a packet carrying \(packet.count - size)"))
        }
        let id = UInt64(load(at: 8, in: bytes)) | UInt64(load(at: 12, in: bytes)) << 32
        return .success(ServiceHeader(kind: kind, qos: DispatchQoS(qosClass: qosClass, relativePriority: relative), id: id,
                                      threadID: Int32(bitPattern: load(at: 16, in: bytes)),
                                      activity: load(at: 20, in: bytes), payloadBytes: payloadBytes))
    }

    private static func store(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    private static func load(at offset: Int, in bytes: [UInt8]) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}

/// Why a packet is not a service packet.
struct MalformedPacket: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// QoS classes as the wire and comparisons see them: 0 unspecified, 1 background …
/// 5 user-interactive.
enum ServiceQoS {
    static func code(of qosClass: DispatchQoS.QoSClass) -> UInt8 {
        switch qosClass {
        case .unspecified: return 0
        case .background: return 1
        case .utility: return 2
        case .default: return 3
        case .userInitiated: return 4
        case .userInteractive: return 5
        }
    }

    static func qosClass(code: UInt8) -> DispatchQoS.QoSClass? {
        switch code {
        case 0: return .unspecified
        case 1: return .background
        case 2: return .utility
        case 3: return .default
        case 4: return .userInitiated
        case 5: return .userInteractive
        default: return nil
        }
    }

    /// The lower of two QoS (a class below wins; within a class, the lower relative priority).
    static func lower(_ a: DispatchQoS, _ b: DispatchQoS) -> DispatchQoS {
        rank(a) <= rank(b) ? a : b
    }

    static func rank(_ qos: DispatchQoS) -> Int { Int(code(of: qos.qosClass)) * 16 + qos.relativePriority }
}
