import Foundation
import Keyward
import XCTest

/// Request heads whose lines a lenient parser would read differently from a front proxy
/// (RFC 9112 §5.2 obs-fold, RFC 9110 §5.5 NUL, an empty name): one JSON 400, and the provider
/// receives nothing.
final class ProxyRequestHeadTests: XCTestCase {
    var env: TestDeployment!
    var token = ""

    override func setUpWithError() throws {
        env = try TestDeployment()
        token = try env.session().1
    }

    override func tearDown() { env?.shutdown() }

    /// Sends a chat request whose head has `fields` (CRLF-terminated lines) after Host and
    /// Authorization, then `body`; returns the response and every byte after it until the close.
    private func send(fields: String, body: String) throws -> (RawConnection.Response, [UInt8]) {
        let connection = try RawConnection(port: env.deployment.server.port, receiveTimeout: 5)
        try connection.send("POST /p/chat/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\(fields)\r\n\(body)")
        let response = try connection.readResponse()
        return (response, connection.readToEnd())
    }

    private func assertRefused(fields: String, body: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (response, rest) = try send(fields: fields, body: body)
        XCTAssertEqual(response.status, 400, file: file, line: line)
        XCTAssertEqual(response.header("content-type"), "application/json", file: file, line: line)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"error":"bad_request"}"#, file: file, line: line)
        XCTAssertEqual(rest, [], "bytes after the 400", file: file, line: line)
        XCTAssertEqual(env.provider.received.count, 0, "the provider received the request", file: file, line: line)
    }

    func testTheSameRequestUnfoldedIsForwarded() throws {
        // The control: with the field on one line, the request and its body reach the provider.
        let (response, _) = try send(fields: "Content-Type: application/json\r\nContent-Length: 2\r\n", body: "{}")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(env.provider.received.first?.body, Array("{}".utf8))
    }

    func testFoldIntoContentLengthIsRefused() throws {
        try assertRefused(fields: "Content-Lengt: 5\r\n h\r\n", body: "hello")
    }

    func testFoldIntoTransferEncodingIsRefused() throws {
        try assertRefused(fields: "Transfer-Encodin: chunked\r\n g\r\n", body: "5\r\nhello\r\n0\r\n\r\n")
    }

    func testFoldInAnOrdinaryFieldIsRefused() throws {
        try assertRefused(fields: "Content-Length: 2\r\nX-Note: one\r\n two\r\n", body: "{}")
    }

    func testEmptyFieldNameIsRefused() throws {
        try assertRefused(fields: "Content-Length: 2\r\n: nameless\r\n", body: "{}")
    }

    func testNULInAFieldIsRefused() throws {
        try assertRefused(fields: "Content-Length: 2\r\nX-Note: a\u{0}Content-Length: 9\r\n", body: "{}")
    }
}
