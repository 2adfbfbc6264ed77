import Foundation
import XCTest
@testable import Upstream

/// Easy handles are reused (`EasyHandlePool`): nothing of one request may leak into the next.
final class HandleReuseTests: XCTestCase {
    func testAReusedHandleCarriesNothingOfThePreviousRequest() throws {
        let server = try TestUpstreamServer { request, conn in conn.respond(status: 200, body: Array(request.target.utf8)) }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        let first = RecordingHandler()
        client.start(
            UpstreamRequest(url: "http://127.0.0.1:\(server.port)/first", method: "PUT",
                            headers: [("X-First", "1"), ("Authorization", "Bearer first")], body: Array("payload".utf8)),
            handler: first)
        XCTAssertTrue(first.waitForCompletion())
        for index in 0..<5 {
            let next = RecordingHandler()
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/next\(index)"), handler: next)
            XCTAssertTrue(next.waitForCompletion())
            XCTAssertEqual(next.snapshot.body, Array("/next\(index)".utf8))
        }
        let requests = server.requests
        XCTAssertEqual(requests.count, 6)
        XCTAssertEqual(requests[0].method, "PUT")
        XCTAssertEqual(requests[0].body, Array("payload".utf8))
        for request in requests.dropFirst() {
            XCTAssertEqual(request.method, "GET")
            XCTAssertEqual(request.body, [])
            XCTAssertFalse(request.headers.contains { $0.0.lowercased() == "x-first" || $0.0.lowercased() == "authorization" })
            XCTAssertFalse(request.headers.contains { $0.0.lowercased() == "content-length" })
        }
    }
}
