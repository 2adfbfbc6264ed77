import Foundation
import HTTPServer
import TestWaiting
import XCTest

/// Heads made of many small parts (query arguments, cookie pairs) and framing refused while a body
/// is read: each gets exactly one answer at once, and the server reports what it answered.
final class HTTPServerPoolExhaustionTests: XCTestCase {
    /// A server that answers 200 with the target it saw, and collects refusals.
    private func echoServer(maxHeaderBytes: Int = 16 * 1024, refusals: Box<[HTTPRequestRefusal]>) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration(threads: 2)
        configuration.maxHeaderBytes = maxHeaderBytes
        return try startServer(configuration: configuration, bodyLimit: { _ in 64 },
                               onRefusal: { refusal in refusals.mutate { $0.append(refusal) } }) { head, _, writer in
            writer.respond(status: 200, body: Array(head.target.utf8))
        }
    }

    /// `GET /q?a&a&…` with `count` arguments (the last one `a` followed by `padding` more `a`s);
    /// the head is 27 + 2 × count + padding bytes (request line and `Host` field, without the blank line).
    private func manyArguments(_ count: Int, padding: Int = 0) -> (request: String, target: String) {
        let target = "/q?" + String(repeating: "a&", count: count) + String(repeating: "a", count: padding)
        return ("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n", target)
    }

    /// The arguments and padding that make the head exactly `bytes` long.
    private func filling(_ bytes: Int) -> (count: Int, padding: Int) {
        ((bytes - 27) / 2, (bytes - 27) % 2)
    }

    func testAnyNumberOfQueryArgumentsWithinTheHeadLimitIsServed() throws {
        for maxHeaderBytes in [16 * 1024, 65536] {
            let refusals = Box<[HTTPRequestRefusal]>([])
            let server = try echoServer(maxHeaderBytes: maxHeaderBytes, refusals: refusals)
            // Any count is served: only the head's bytes are bounded; the last count fills the head
            // limit to the byte.
            let full = filling(maxHeaderBytes)
            for (count, padding) in [(552, 0), (553, 0), (2000, 0), full] {
                let (request, target) = manyArguments(count, padding: padding)
                let client = try RawClient(port: server.port, receiveTimeout: 10)
                let response = try client.exchange(request)
                XCTAssertEqual(response.status, 200, "\(count) arguments, max_header_bytes \(maxHeaderBytes)")
                XCTAssertTrue(response.text == target, "the handler saw another target (\(response.body.count) bytes)")
                // Keep-alive: the connection serves the next request.
                XCTAssertEqual(try client.exchange("GET /next HTTP/1.1\r\nHost: x\r\n\r\n").text, "/next")
            }
            XCTAssertEqual(refusals.value.map(\.reason), [])
        }
    }

    func testQueryArgumentsOneByteOverTheHeadLimitAre431() throws {
        for maxHeaderBytes in [16 * 1024, 65536] {
            let refusals = Box<[HTTPRequestRefusal]>([])
            let server = try echoServer(maxHeaderBytes: maxHeaderBytes, refusals: refusals)
            let full = filling(maxHeaderBytes)
            let (request, _) = manyArguments(full.count, padding: full.padding + 1)
            let client = try RawClient(port: server.port, receiveTimeout: 10)
            let response = try client.exchange(request)
            XCTAssertEqual(response.status, 431)
            XCTAssertEqual(response.text, #"{"error":"bad_request"}"#)
            XCTAssertEqual(response.header("Keyward-Error"), "bad_request")
            XCTAssertTrue(client.isClosedByServer())
            XCTAssertEqual(refusals.value.map(\.reason), ["head_too_large"])
        }
    }

    func testEmptyQueryArgumentsFillingTheHeadAreServed() throws {
        // `&&&…`: an empty argument per byte, still only bytes of the head.
        let refusals = Box<[HTTPRequestRefusal]>([])
        let server = try echoServer(refusals: refusals)
        let target = "/q?" + String(repeating: "&", count: 16 * 1024 - 27)
        let response = try RawClient(port: server.port, receiveTimeout: 10).exchange("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.text == target, "the handler saw another target (\(response.body.count) bytes)")
    }

    func testCookieOfFiveHundredPairsWithinTheHeadLimitIsServed() throws {
        // The parser keeps no record per cookie pair, so a head within the limits is served
        // however its Cookie field is made.
        let refusals = Box<[HTTPRequestRefusal]>([])
        let calls = Box(0)
        var configuration = HTTPServerConfiguration(threads: 2)
        configuration.maxHeaderBytes = 16 * 1024
        let server = try startServer(configuration: configuration, onRefusal: { refusal in refusals.mutate { $0.append(refusal) } }) { _, _, writer in
            calls.mutate { $0 += 1 }
            writer.respond(status: 200, body: Array("served".utf8))
        }
        let cookie = (0..<500).map { "a\($0)=b" }.joined(separator: "; ")
        let client = try RawClient(port: server.port, receiveTimeout: 10)
        let response = try client.exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\r\n")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "served")
        // Exactly one response: the next one on the connection is the next request's.
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\nCookie: a=b; c=d\r\n\r\n").text, "served")
        XCTAssertEqual(refusals.value, [])
        XCTAssertEqual(calls.value, 2)
    }

    func testMalformedChunkedFramingIsReportedWithTheStatusSent() throws {
        let cases: [(size: String, status: Int, reason: String)] = [
            ("zz", 400, "chunked_body_malformed"),
            ("-1", 400, "chunked_body_malformed"),
            ("FFFFFFFFFFFFFFFFF", 413, "chunk_size_too_large"),
        ]
        for (size, status, reason) in cases {
            let refusals = Box<[HTTPRequestRefusal]>([])
            let server = try echoServer(refusals: refusals)
            let client = try RawClient(port: server.port, receiveTimeout: 10)
            try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabc\r\n0\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, status, "chunk size \(size)")
            XCTAssertTrue(client.waitForClose())
            XCTAssertTrue(waitUntil(timeout: 5) { !refusals.value.isEmpty }, "no report for chunk size \(size)")
            XCTAssertEqual(refusals.value.map(\.status), [status], "chunk size \(size)")
            XCTAssertEqual(refusals.value.map(\.reason), [reason], "chunk size \(size)")
        }
    }

    func testARequestLineWithoutSpacesIsOneJSON400AndClosed() throws {
        // Refused like any other bad head: one JSON 400, reported, then the close (RFC 9112 §3:
        // method, target and version are split by single spaces).
        let refusals = Box<[HTTPRequestRefusal]>([])
        let server = try echoServer(refusals: refusals)
        for request in ["GARBAGE\r\n\r\n", "GET\t/healthz\tHTTP/1.1\r\n\r\n"] {
            let client = try RawClient(port: server.port, receiveTimeout: 10)
            try client.send(request)
            let received = String(decoding: try client.readToEnd(), as: UTF8.self)
            XCTAssertTrue(received.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "answer to \(request.debugDescription): \(received)")
            XCTAssertTrue(received.contains("\r\nKeyward-Error: bad_request\r\n"), received)
            XCTAssertTrue(received.hasSuffix("\r\n\r\n{\"error\":\"bad_request\"}"), received)
        }
        XCTAssertEqual(server.activeRequests, 0)
        XCTAssertEqual(refusals.value.map(\.status), [400, 400])
        XCTAssertEqual(refusals.value.map(\.reason), ["invalid_target", "invalid_method"])
    }
}
