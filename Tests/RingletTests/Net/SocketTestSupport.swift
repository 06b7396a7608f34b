import CRinglet
import Glibc
import Testing
@_spi(RingletNet) @testable import Ringlet

/// A listener on 127.0.0.1 at a port the kernel picks.
func loopbackListener(sourceLocation: SourceLocation = #_sourceLocation) throws -> (RingSocket, SocketAddress) {
    let listener = try RingSocket.listening(on: try SocketAddress.ip("127.0.0.1", port: 0))
    return (listener, try listener.localAddress())
}

/// Waits for one result a handler delivers (nil: none came within the patience).
final class Outcome<Value>: @unchecked Sendable {
    private let lock = FutexLock()
    private var value: Value?
    private let arrived = DispatchSemaphore(value: 0)
    deinit { lock.deallocate() }

    func set(_ newValue: Value) {
        lock.withLock { value = newValue }
        arrived.signal()
    }

    func wait(sourceLocation: SourceLocation = #_sourceLocation) -> Value? {
        guard waited(arrived, sourceLocation: sourceLocation) else { return nil }
        return lock.withLock { value }
    }
}

/// Receives from `socket` until the end of the stream; `done` gets every byte, or the error.
func receiveAll(_ socket: RingSocket, queue: DispatchQueue, into bytes: [UInt8] = [],
                done: @escaping (Result<[UInt8], SocketError>) -> Void) {
    socket.receive(upTo: 16 * 1024, queue: queue) { result in
        switch result {
        case .failure(let error): done(.failure(error))
        case .success(let message):
            if message.endOfStream { return done(.success(bytes)) }
            receiveAll(socket, queue: queue, into: bytes + contents(of: message.data), done: done)
        }
    }
}

/// `count` bytes of a pattern, in a DispatchData of several regions.
func patternData(_ count: Int, regions: Int = 3) -> (DispatchData, [UInt8]) {
    let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
    var data = DispatchData.empty
    let step = max(1, count / regions)
    var start = 0
    while start < count {
        let end = min(count, start + step)
        bytes[start..<end].withUnsafeBytes { data.append($0) }
        start = end
    }
    return (data, bytes)
}

extension SocketError {
    var errnoName: String { errno.name }
}

/// A value one queue reads and writes (the test reads it through that queue).
final class SharedValue<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// The bytes of `data`, region by region (Array(data) goes byte by byte: slow for MiBs).
func contents(of data: DispatchData) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(data.count)
    data.enumerateBytes { buffer, _, _ in result.append(contentsOf: buffer) }
    return result
}
