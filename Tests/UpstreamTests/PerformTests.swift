import Foundation
import XCTest
@testable import Upstream

/// The blocking call for small JSON exchanges.
final class PerformTests: XCTestCase {
    func testPerformReturnsTheWholeResponse() throws {
        let server = try TestUpstreamServer { request, conn in
            conn.respond(status: 200, headers: [("Content-Type", "application/json")], body: request.body)
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        let body = Array(#"{"integrity_token":"abc"}"#.utf8)
        let response = try client.perform(UpstreamRequest(
            url: "http://127.0.0.1:\(server.port)/v1/decode", method: "POST",
            headers: [("Content-Type", "application/json")], body: body))

        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("content-type"), "application/json")
        XCTAssertEqual(response.body, body)
    }

    func testPerformRefusesABodyOverTheCap() throws {
        let server = try TestUpstreamServer { _, conn in
            conn.respond(status: 200, body: [UInt8](repeating: 0x41, count: 1 << 20))
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        XCTAssertThrowsError(try client.perform(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), maxResponseBytes: 1000)) {
            XCTAssertEqual($0 as? UpstreamError, .responseTooLarge(limit: 1000))
            XCTAssertEqual(($0 as? UpstreamError)?.reason, "upstream_response_too_large")
        }
    }

    func testPerformThrowsConnect() throws {
        let server = try TestUpstreamServer { _, _ in }
        let port = server.port
        server.stop()
        let client = UpstreamClient()
        defer { client.shutdown() }

        XCTAssertThrowsError(try client.perform(UpstreamRequest(url: "http://127.0.0.1:\(port)/"))) {
            XCTAssertEqual($0 as? UpstreamError, .connect)
        }
    }
}
