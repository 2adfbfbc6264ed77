import XCTest
@testable import Upstream

/// The upstream receives the request exactly as given, with nothing libcurl would add on its own.
final class RequestFidelityTests: XCTestCase {
    private var client: UpstreamClient!
    private var server: TestUpstreamServer!

    override func setUpWithError() throws {
        client = UpstreamClient()
        server = try TestUpstreamServer { _, connection in
            connection.respond(status: 200, body: Array("ok".utf8))
        }
    }

    override func tearDown() {
        client.shutdown()
        server.stop()
    }

    private func send(_ request: UpstreamRequest) throws -> RecordingHandler {
        let handler = RecordingHandler()
        client.start(request, handler: handler)
        XCTAssertTrue(handler.waitForCompletion())
        return handler
    }

    func testPostArrivesWithMethodTargetHeadersAndBodyExactlyAsSent() throws {
        let body = Array(#"{"model":"x","stream":true}"#.utf8) + [0x00, 0xFF, 0x0D, 0x0A]
        let headers: [(String, String)] = [
            ("Host", "api.example.test"),
            ("x-Mixed-Case", "Keep Me"),
            ("Content-Type", "application/json"),
            ("X-Dup", "one"),
            ("X-Dup", "two"),
            ("X-Empty", ""),
            ("Authorization", "Bearer upstream-key"),
        ]
        let request = UpstreamRequest(
            url: "http://127.0.0.1:\(server.port)/v1/chat/completions?a=1&b=%2F&c",
            method: "POST", headers: headers, body: body)
        let handler = try send(request)

        XCTAssertNil(handler.snapshot.error)
        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.target, "/v1/chat/completions?a=1&b=%2F&c")
        XCTAssertEqual(received.headers.lines, headers.lines + ["Content-Length: \(body.count)"])
        XCTAssertEqual(received.body, body)
    }

    func testGetWithoutHeadersCarriesOnlyTheRequiredHost() throws {
        let handler = try send(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/maps/api/geocode/json?key=k"))

        XCTAssertNil(handler.snapshot.error)
        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.method, "GET")
        XCTAssertEqual(received.target, "/maps/api/geocode/json?key=k")
        XCTAssertEqual(received.headers.lines, ["Host: 127.0.0.1:\(server.port)"])
        XCTAssertEqual(received.body, [])
    }

    func testHostGivenLaterIsSentFirstAsRFC9112Asks() throws {
        // libcurl emits Host right after the request line (RFC 9112 §3.2: "SHOULD ... as the first field").
        _ = try send(UpstreamRequest(
            url: "http://127.0.0.1:\(server.port)/", headers: [("X-First", "1"), ("Host", "h"), ("X-Last", "2")]))
        XCTAssertEqual(server.requests.first?.headers.lines, ["Host: h", "X-First: 1", "X-Last: 2"])
    }

    func testCustomMethodWithBodyKeepsMethodAndSendsLength() throws {
        let request = UpstreamRequest(
            url: "http://127.0.0.1:\(server.port)/v1/items/7", method: "PATCH",
            headers: [("Host", "h")], body: Array("{}".utf8))
        _ = try send(request)

        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.method, "PATCH")
        XCTAssertEqual(received.headers.lines, ["Host: h", "Content-Length: 2"])
        XCTAssertEqual(received.body, Array("{}".utf8))
    }

    func testEmptyPostSendsZeroLengthAndDeleteSendsNone() throws {
        _ = try send(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/a", method: "POST", headers: [("Host", "h")]))
        _ = try send(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/b", method: "DELETE", headers: [("Host", "h")]))

        let requests = server.requests
        XCTAssertEqual(requests.count, 2)
        XCTAssertEqual(requests.first?.headers.lines, ["Host: h", "Content-Length: 0"])
        XCTAssertEqual(requests.last?.method, "DELETE")
        XCTAssertEqual(requests.last?.headers.lines, ["Host: h"])
    }

    func testCallerFramingHeadersAreReplacedByTheBodysLength() throws {
        let request = UpstreamRequest(
            url: "http://127.0.0.1:\(server.port)/", method: "PUT",
            headers: [("Host", "h"), ("Content-Length", "999"), ("Transfer-Encoding", "chunked")], body: [1, 2, 3])
        _ = try send(request)

        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.headers.lines, ["Host: h", "Content-Length: 3"])
        XCTAssertEqual(received.body, [1, 2, 3])
    }

    func testHeaderValueWithLineBreakIsRefusedAndNothingIsSent() throws {
        let request = UpstreamRequest(
            url: "http://127.0.0.1:\(server.port)/", headers: [("X-Evil", "a\r\nInjected: 1")])
        let handler = try send(request)

        XCTAssertEqual(handler.snapshot.error, .invalidRequest("header value contains CR, LF or NUL"))
        XCTAssertEqual(handler.snapshot.error?.reason, "upstream_invalid_request")
        XCTAssertEqual(handler.snapshot.afterHead, false)
        XCTAssertEqual(server.connectionCount, 0)
    }

    func testNonHTTPSchemeIsRefused() throws {
        let handler = try send(UpstreamRequest(url: "file:///etc/passwd"))
        XCTAssertEqual(handler.snapshot.error?.reason, "upstream_invalid_request")
    }

    func testMethodThatIsNotATokenIsRefused() throws {
        let handler = try send(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/", method: "GET /x"))
        XCTAssertEqual(handler.snapshot.error, .invalidRequest("method is not a token"))
        XCTAssertEqual(server.connectionCount, 0)
    }
}

extension RequestFidelityTests {
    func testURLWithWhitespaceIsRefused() throws {
        let handler = try send(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/a b"))
        XCTAssertEqual(handler.snapshot.error, .invalidRequest("URL contains whitespace or control characters"))
        XCTAssertEqual(server.connectionCount, 0)
    }
}

extension RequestFidelityTests {
    func testLargeBodyIsSentWithoutExpectContinueAndArrivesIntact() throws {
        // libcurl 7.88 would add `Expect: 100-continue` above 1 MiB and wait for the interim answer.
        let body = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 12)) }
        let request = UpstreamRequest(
            url: "http://127.0.0.1:\(server.port)/upload", method: "POST",
            headers: [("Host", "h"), ("Content-Type", "application/octet-stream")], body: body)
        let handler = try send(request)

        XCTAssertNil(handler.snapshot.error)
        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.headers.lines, ["Host: h", "Content-Type: application/octet-stream", "Content-Length: \(body.count)"])
        XCTAssertTrue(received.body == body)
    }
}

extension RequestFidelityTests {
    func testURLWithUserinfoIsRefusedSoLibcurlAddsNoBasicAuth() throws {
        let handler = try send(UpstreamRequest(url: "http://user:secret@127.0.0.1:\(server.port)/"))
        XCTAssertEqual(handler.snapshot.error, .invalidRequest("URL carries userinfo"))
        XCTAssertEqual(server.connectionCount, 0)
    }

    func testAtSignInPathOrQueryIsFine() throws {
        let handler = try send(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/users/a@b.example?cc=c@d"))
        XCTAssertNil(handler.snapshot.error)
        XCTAssertEqual(server.requests.first?.target, "/users/a@b.example?cc=c@d")
    }
}
