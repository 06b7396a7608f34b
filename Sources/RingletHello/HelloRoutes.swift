#if Hummingbird  // the package's Hummingbird trait: `make serve` and `make bench-http` turn it on
// The routes of the hello example, written once: RingletHello serves them on Ringlet, and
// NIOHelloBench (which links this file) on Hummingbird's own NIOPosix server, so that
// `make bench-http` compares the runtimes under the same code.
import Hummingbird

enum HelloRoutes {
    /// GET / — a plaintext hello; GET /json — about 4 KiB of JSON (64 readings).
    static func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/") { _, _ in "Hello from the ring\n" }
        router.get("/json") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        return router
    }

    /// 64 readings of a made-up sensor, made once: about 4 KiB.
    static let json: String = {
        let readings = (0..<64).map { index in
            #"{"sensor":"probe-\#(index % 8)","sequence":\#(index),"celsius":\#(20 + index % 7).\#(index % 10),"ok":true}"#
        }
        return #"{"device":"ringlet-hello","readings":["# + readings.joined(separator: ",") + "]}\n"
    }()
}
#endif
