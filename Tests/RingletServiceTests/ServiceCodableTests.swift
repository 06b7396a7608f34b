import Testing
@_spi(RingletNet) import Ringlet
import RingletService
import RingletServiceCodable

/// Codable messages (Sources/RingletServiceCodable): JSON both ways, errors that name the type.
@Suite struct ServiceCodableTests {
    struct Reading: Codable, Equatable, Sendable {
        var sensor: String
        var celsius: Double
    }

    struct Ask: Codable, Sendable {
        var sensor: String
    }

    @Test func aRequestAndItsReplyAreSwiftValues() async throws {
        let endpoint = uniqueEndpoint()
        let listener = try ServiceListener(endpoint: endpoint) { session in
            session.setMessageHandler { message in
                guard let ask = try? message.decode(Ask.self) else { return }
                try? message.reply(Reading(sensor: ask.sensor, celsius: 21.5))
            }
        }
        defer { listener.cancel() }
        let session = try ServiceSession(endpoint: endpoint)
        let reading = try await session.sendWithReply(Ask(sensor: "porch"), as: Reading.self)
        #expect(reading == Reading(sensor: "porch", celsius: 21.5))
        let handled = Delivered<Result<Reading, ServiceCodingError>>()
        session.send(Ask(sensor: "attic"), replyingWith: Reading.self) { handled.put($0) }
        #expect(try handled.next()?.get() == Reading(sensor: "attic", celsius: 21.5))
        session.cancel()
    }

    /// A payload of another shape fails to decode, naming the type.
    @Test func aPayloadOfAnotherShapeNamesTheType() async throws {
        let endpoint = uniqueEndpoint()
        let listener = try ServiceListener(endpoint: endpoint) { session in
            session.setMessageHandler { message in try? message.reply(["not": "a reading"]) }
        }
        defer { listener.cancel() }
        let session = try ServiceSession(endpoint: endpoint)
        do {
            _ = try await session.sendWithReply(Ask(sensor: "porch"), as: Reading.self)
            Issue.record("a dictionary decoded as a Reading")
        } catch {
            guard case .decoding(let type, _, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(type == "Reading")
            #expect(error.description.contains("not the JSON of a Reading"))
        }
        session.cancel()
    }
}
