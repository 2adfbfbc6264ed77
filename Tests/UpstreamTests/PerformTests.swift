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

extension PerformTests {
    func testPerformFromAHandlerIsRefusedInsteadOfDeadlocking() throws {
        let server = try TestUpstreamServer { _, conn in conn.respond(status: 200) }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        final class NestingHandler: UpstreamResponseHandler, @unchecked Sendable {
            let client: UpstreamClient
            let url: String
            let recorder = RecordingHandler()
            var nestedError: UpstreamError?
            init(client: UpstreamClient, url: String) { self.client = client; self.url = url }
            func upstreamHead(status: Int, headers: [(String, String)]) {
                do throws(UpstreamError) { _ = try client.perform(UpstreamRequest(url: url)) } catch { nestedError = error }
            }
            func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool { true }
            func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) { recorder.upstreamComplete(error, afterHead: afterHead) }
        }
        let handler = NestingHandler(client: client, url: "http://127.0.0.1:\(server.port)/")
        client.start(UpstreamRequest(url: handler.url), handler: handler)
        XCTAssertTrue(handler.recorder.waitForCompletion())
        XCTAssertEqual(handler.nestedError, .invalidRequest("perform called on the upstream thread"))
    }
}
