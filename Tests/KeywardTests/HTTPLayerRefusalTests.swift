import Foundation
import Keyward
import TestWaiting
import XCTest

/// What the HTTP layer answers itself, seen through a whole Keyward: many query arguments reach
/// the provider, every answer Keyward writes on the socket carries `Keyward-Error`, and a refusal
/// made in a chunked body is logged with the status the client got.
final class HTTPLayerRefusalTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    /// The log line of the last refused request (route `refused`) among the lines from index `first` on, parsed.
    private func lastRefusedLine(from first: Int) -> [String: Any]? {
        for line in env.logLines.dropFirst(first).reversed() where line.contains("\"route\":\"refused\"") {
            guard let data = line.data(using: .utf8) else { continue }
            return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        }
        return nil
    }

    func testManyQueryArgumentsOnAProxyRouteReachTheProvider() throws {
        env = try TestDeployment()
        let (_, token) = try env.session()
        for count in [552, 553, 2000] {
            let target = "/v1/models?" + String(repeating: "a&", count: count)
            let connection = try RawConnection(port: env.deployment.server.port, receiveTimeout: 10)
            let response = try connection.exchange("GET /p/chat\(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            XCTAssertEqual(response.status, 200, "\(count) arguments")
            XCTAssertTrue(env.provider.received.last?.target == target, "the provider got another target for \(count) arguments")
        }
        let health = try RawConnection(port: env.deployment.server.port, receiveTimeout: 10)
            .exchange("GET /healthz?" + String(repeating: "a&", count: 3000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(health.status, 200)
    }

    func testBadContentLengthIsA400WithKeywardError() throws {
        env = try TestDeployment()
        for value in ["+0", "-1", "", "99999999999999999999999"] {
            let connection = try RawConnection(port: env.deployment.server.port, receiveTimeout: 10)
            let response = try connection.exchange("POST /v1/challenge HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n\r\n")
            XCTAssertEqual(response.status, 400, "Content-Length \(value.debugDescription)")
            XCTAssertEqual(errorCode(response.body), "bad_request", "Content-Length \(value.debugDescription)")
            XCTAssertEqual(response.header("keyward-error"), "bad_request", "Content-Length \(value.debugDescription)")
            XCTAssertTrue(connection.isClosedByPeer())
        }
    }

    func testChunkedBodyOverTheLimitIsA413WithKeywardError() throws {
        env = try TestDeployment(chatOptions: "max_body_bytes = 100")
        let (_, token) = try env.session()
        // One chunk just over each limit, and no last chunk: the server reads every byte sent.
        let cases: [(head: String, limit: Int)] = [
            ("POST /v1/attest/ios HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n", 64 * 1024),
            ("POST /p/chat/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n", 100),
        ]
        for (head, limit) in cases {
            let connection = try RawConnection(port: env.deployment.server.port, receiveTimeout: 10)
            let size = limit + 1
            try connection.send(head + "Transfer-Encoding: chunked\r\n\r\n" + String(size, radix: 16) + "\r\n" + String(repeating: "a", count: size))
            let response = try connection.readResponse()
            XCTAssertEqual(response.status, 413, head)
            XCTAssertEqual(errorCode(response.body), "payload_too_large", head)
            XCTAssertEqual(response.header("keyward-error"), "payload_too_large", head)
            XCTAssertTrue(connection.isClosedByPeer())
        }
        XCTAssertEqual(env.provider.received.count, 0)
    }

    func testMalformedChunkSizesAreLoggedWithTheStatusSent() throws {
        env = try TestDeployment()
        for (size, status, reason) in [("zz", 400, "chunked_body_malformed"), ("-1", 400, "chunked_body_malformed"),
                                       ("FFFFFFFFFFFFFFFFF", 413, "chunk_size_too_large")] {
            let before = env.logLines.count
            let connection = try RawConnection(port: env.deployment.server.port, receiveTimeout: 10)
            let response = try connection.exchange(
                "POST /v1/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabc\r\n0\r\n\r\n")
            XCTAssertEqual(response.status, status, "chunk size \(size)")
            XCTAssertTrue(waitUntil { self.lastRefusedLine(from: before) != nil }, "no log line for chunk size \(size)")
            XCTAssertEqual(lastRefusedLine(from: before)?["reason"] as? String, reason, "chunk size \(size)")
            XCTAssertEqual(lastRefusedLine(from: before)?["status"] as? Int, status, "chunk size \(size)")
        }
    }
}
