import FoundationEssentials
import Ringlet
import RingletService

/// Codable messages: a value is sent as its JSON (FoundationEssentials' `JSONEncoder`),
/// under the same size limit as bytes. For programs whose messages are Swift types on
/// both sides; `ServiceSession.send(_:)` with `DispatchData` stays the way for bytes.
extension ServiceSession {
    /// Sends `value` as JSON, wanting no reply.
    public func send<Value: Encodable>(_ value: Value) throws(ServiceCodingError) {
        let payload = try ServiceCoding.encode(value)
        do { try send(payload) } catch { throw .service(error) }
    }

    /// Sends `request` as JSON; `replyHandler` gets the reply decoded as `Reply`, or why not.
    public func send<Request: Encodable, Reply: Decodable>(
        _ request: Request, replyingWith _: Reply.Type,
        replyHandler: @escaping @Sendable (Result<Reply, ServiceCodingError>) -> Void
    ) {
        let payload: DispatchData
        do { payload = try ServiceCoding.encode(request) } catch {
            return targetQueue.async { replyHandler(.failure(error)) }
        }
        send(payload) { result in
            switch result {
            case .failure(let error): replyHandler(.failure(.service(error)))
            case .success(let message): replyHandler(Result { () throws(ServiceCodingError) -> Reply in try message.decode(Reply.self) })
            }
        }
    }

    /// Sends `request` as JSON and returns the reply decoded as `Reply`.
    public func sendWithReply<Request: Encodable, Reply: Decodable>(_ request: Request, as _: Reply.Type)
        async throws(ServiceCodingError) -> Reply {
        let payload = try ServiceCoding.encode(request)
        let message: ServiceMessage
        do { message = try await sendWithReply(payload) } catch { throw .service(error) }
        return try message.decode(Reply.self)
    }
}

extension ServiceMessage {
    /// The payload decoded from JSON as `Value`; the error names the type and what is wrong.
    public func decode<Value: Decodable>(_ type: Value.Type) throws(ServiceCodingError) -> Value {
        let bytes = Data(Array(payload))
        do {
            return try JSONDecoder().decode(Value.self, from: bytes)
        } catch {
            throw .decoding(type: String(describing: Value.self), reason: "\(error)", bytes: payload.count)
        }
    }

    /// Replies with `value` as JSON.
    public func reply<Value: Encodable>(_ value: Value) throws(ServiceCodingError) {
        let payload = try ServiceCoding.encode(value)
        do { try reply(payload) } catch { throw .service(error) }
    }
}

/// Why a Codable message was not sent, or not read.
public enum ServiceCodingError: Error, CustomStringConvertible {
    /// The value could not be encoded (`JSONEncoder` refused it).
    case encoding(type: String, reason: String)
    /// The payload is not the JSON of `type`.
    case decoding(type: String, reason: String, bytes: Int)
    /// The session refused or failed (`ServiceError` says why).
    case service(ServiceError)

    public var description: String {
        switch self {
        case .encoding(let type, let reason): return "a \(type) could not be encoded as JSON: \(reason)"
        case .decoding(let type, let reason, let bytes):
            return "a message of \(bytes) bytes is not the JSON of a \(type): \(reason); do both sides use the same type?"
        case .service(let error): return error.description
        }
    }
}

enum ServiceCoding {
    static func encode<Value: Encodable>(_ value: Value) throws(ServiceCodingError) -> DispatchData {
        let data: Data
        do { data = try JSONEncoder().encode(value) } catch {
            throw .encoding(type: String(describing: Value.self), reason: "\(error)")
        }
        return data.withUnsafeBytes { DispatchData(bytes: $0) }
    }
}
