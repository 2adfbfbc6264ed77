import Foundation
import HTTPServer
import Keyward
import KeywardDemo
import XCTest

/// An upstream answer with an empty header field (legal, RFC 9110 §5.5) still reaches the client.
final class EmptyHeaderTests: XCTestCase {
    func testEmptyUpstreamHeaderValueIsLeftOutNotTurnedInto500() throws {
        let upstream = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1),
            bodyLimit: { _ in 0 },
            handler: { _, _, writer in
                writer.respond(status: 200, headers: [("X-Empty", ""), ("X-Kept", "1")], body: Array("ok".utf8))
            })
        try upstream.start()
        defer { upstream.stop() }
        let env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("blank", port: upstream.port, allow: [("GET", "/x")])
        })
        defer { env.shutdown() }
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/blank/x", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("x-kept"), "1")
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "ok")
    }
}
