import Foundation
import TestWaiting
import XCTest

/// A provider that closes its connection mid-body: every byte Keyward already received reaches the
/// client, then the client's connection is cut, so it sees the truncation (fewer bytes than the
/// `Content-Length`, or a chunked body without its last chunk, RFC 9112 §7.1), and the access log's
/// `bytes_out` counts exactly what was relayed.
final class ProxyStreamCutTests: XCTestCase {
    var env: TestDeployment!
    var upstream: RawUpstream!

    override func tearDown() {
        env?.shutdown()
        upstream?.stop()
    }

    /// Starts a deployment in front of a raw upstream that sends `answer` to each request and closes.
    private func deploy(answer: String) throws -> String {
        upstream = try RawUpstream(answer: answer, closeAfterAnswer: true)
        let port = upstream.port
        env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("up", port: port, allow: [("GET", "/v1/midclose")])
        })
        return try env.session().1
    }

    func testAnUpstreamClosingMidBodyOfADeclaredLengthRelaysEveryByteThenCuts() throws {
        let body = String(repeating: "0123456789", count: 5_000)
        let token = try deploy(answer: "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + body)
        let env = self.env!
        for round in 1...10 {
            let connection = try RawConnection(port: env.deployment.server.port)
            let response = try connection.exchange(
                "GET /p/up/v1/midclose HTTP/1.1\r\nHost: keyward\r\nAuthorization: Bearer \(token)\r\n\r\n")
            XCTAssertEqual(response.status, 200, "round \(round)")
            XCTAssertEqual(response.header("content-length"), "100000", "round \(round)")
            XCTAssertEqual(response.bodyCount, 50_000, "round \(round): every byte the provider sent must reach the client")
            XCTAssertTrue(response.body == Array(body.utf8), "round \(round): the bytes must arrive unchanged")
            XCTAssertTrue(connection.isClosedByPeer(), "round \(round): the connection must be cut after the bytes")
            let line = try cutLine(env, count: round)
            XCTAssertTrue(line.contains("\"status\":200"), line)
            XCTAssertTrue(line.contains("\"reason\":\"stream_cut_upstream_protocol\""), line)
            XCTAssertTrue(line.contains("\"bytes_out\":50000"), line)
        }
    }

    func testAnUpstreamClosingMidChunkedEventStreamRelaysTheEventThenCutsWithoutTheLastChunk() throws {
        let event = "data: " + String(repeating: "e", count: 1_000) + "\n\n"  // 1,008 bytes
        let token = try deploy(answer: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n")
        let env = self.env!
        for round in 1...10 {
            let connection = try RawConnection(port: env.deployment.server.port)
            try connection.send("GET /p/up/v1/midclose HTTP/1.1\r\nHost: keyward\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let head = try connection.readResponse()
            XCTAssertEqual(head.status, 200, "round \(round)")
            XCTAssertEqual(head.header("transfer-encoding")?.lowercased(), "chunked", "round \(round)")
            let (data, ended) = try decodeChunkedPrefix(connection.readToEnd())
            XCTAssertEqual(String(decoding: data, as: UTF8.self), event, "round \(round): the event must reach the client whole")
            XCTAssertFalse(ended, "round \(round): a cut stream must not end with the last chunk")
            let line = try cutLine(env, count: round)
            XCTAssertTrue(line.contains("\"bytes_out\":1008"), line)
        }
    }

    /// The access-log line of the `count`th call to the provider, once it is written.
    private func cutLine(_ env: TestDeployment, count: Int) throws -> String {
        let lines = { env.logLines.filter { $0.contains("\"provider\":\"up\"") && $0.contains("\"route\":\"proxy\"") } }
        XCTAssertTrue(waitUntil { lines().count >= count }, "call \(count) was never logged")
        return try XCTUnwrap(lines().last)
    }
}
