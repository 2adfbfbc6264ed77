import Foundation
import HTTPServer
import Keyward
import KeywardDemo
import XCTest

/// An upstream answer with an empty header field (legal, RFC 9110 §5.5) still reaches the client.
final class EmptyHeaderTests: XCTestCase {
    func testEmptyUpstreamHeaderValueIsLeftOutNotTurnedInto500() throws {
        // Raw bytes, so the empty field surely goes out (an HTTP library upstream may drop it).
        let upstream = try RawUpstream(answer: "HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Kept: 1\r\nContent-Length: 2\r\n\r\nok")
        defer { upstream.stop() }
        let env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("blank", port: upstream.port, allow: [("GET", "/x")])
        })
        defer { env.shutdown() }
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/blank/x", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.header("x-empty"), "the empty field reached the client")
        XCTAssertEqual(response.header("x-kept"), "1")
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "ok")
    }
}
