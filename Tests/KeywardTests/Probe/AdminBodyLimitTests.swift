import Foundation
import Keyward
import XCTest

/// The admin listener refuses a declared body over its limit from the head alone: one JSON 413,
/// sent before any of the body is read, then the connection closes. Spoken at the socket level so
/// it holds for any engine behind `HTTPServer`.
final class AdminBodyLimitTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    private func deploy() throws -> UInt16 {
        env = try TestDeployment(settings: { $0.adminToken = "admin-" + String(repeating: "a", count: 32) })
        return try XCTUnwrap(env.deployment.server.adminPort)
    }

    private func assertPayloadTooLargeThenClose(_ connection: RawConnection, _ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let response = try connection.readResponse()
        XCTAssertEqual(response.status, 413, path, file: file, line: line)
        XCTAssertEqual(response.header("content-type"), "application/json", path, file: file, line: line)
        XCTAssertEqual(response.header("keyward-error"), "payload_too_large", path, file: file, line: line)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"error":"payload_too_large"}"#, path, file: file, line: line)
        XCTAssertEqual(response.header("connection")?.lowercased(), "close", path, file: file, line: line)
        XCTAssertTrue(connection.isClosedByPeer(), "\(path): the connection stays open after the 413", file: file, line: line)
    }

    /// A client that sends its whole 2 MB body before it reads (no `Expect: 100-continue`) gets
    /// its upload through, then the 413 and the close: not a reset in the middle of the upload.
    func testAWholeTwoMegabyteBodyIsUploadedThenAnswered413AndClosed() throws {
        let port = try deploy()
        for path in ["/admin/v1/devices/abcd/tier", "/metrics"] {
            let connection = try RawConnection(port: port, receiveTimeout: 5)
            try connection.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(2 << 20)\r\n\r\n")
            XCTAssertNoThrow(try connection.send(String(repeating: "x", count: 2 << 20)), "\(path): the upload was cut")
            try assertPayloadTooLargeThenClose(connection, path)
        }
    }

    /// The 413 comes from the head: a client that sent only a little of its body reads it at once,
    /// and the connection closes once the client stops sending.
    func testThe413ComesBeforeTheBodyAndTheConnectionThenCloses() throws {
        let port = try deploy()
        let connection = try RawConnection(port: port, receiveTimeout: 8)
        try connection.send("POST /admin/v1/devices/abcd/tier HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(2 << 20)\r\n\r\n")
        try connection.send(String(repeating: "x", count: 1024))
        try assertPayloadTooLargeThenClose(connection, "little of the body")
        // With `Expect: 100-continue` the 413 takes the place of `100 Continue`, and no body follows.
        let waiting = try RawConnection(port: port, receiveTimeout: 5)
        try waiting.send("POST /admin/v1/devices/abcd/tier HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(2 << 20)\r\nExpect: 100-continue\r\n\r\n")
        try assertPayloadTooLargeThenClose(waiting, "expect 100-continue")
    }
}
