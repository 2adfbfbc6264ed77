import Foundation
import HTTPFields
import HTTP1Codec
@testable import HTTPServer
import TestWaiting
import XCTest

final class HTTPServerHygieneTests: XCTestCase {
    private func hygieneServer(refusals: Box<[HTTPRequestRefusal]>, calls: Box<Int>) throws -> HTTPServer {
        try startServer(
            bodyLimit: { _ in 1024 },
            onRefusal: { refusal in refusals.mutate { $0.append(refusal) } },
            handler: { _, body, writer in
                calls.mutate { $0 += 1 }
                writer.respond(status: 200, body: body)
            })
    }

    /// Sends `request`, expects 400 bad_request and the connection closed, then a fresh request served.
    private func assertRefused(
        _ request: String, status: Int = 400, code: String = "bad_request", reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let refusals = Box<[HTTPRequestRefusal]>([])
        let calls = Box(0)
        let server = try hygieneServer(refusals: refusals, calls: calls)
        let client = try RawClient(port: server.port)
        let response = try client.exchange(request)
        XCTAssertEqual(response.status, status, file: file, line: line)
        XCTAssertEqual(response.text, "{\"error\":\"\(code)\"}", file: file, line: line)
        XCTAssertEqual(response.header("Keyward-Error"), code, file: file, line: line)
        XCTAssertEqual(response.header("Connection")?.lowercased(), "close", file: file, line: line)
        XCTAssertTrue(client.isClosedByServer(), "connection left open", file: file, line: line)
        XCTAssertEqual(calls.value, 0, "handler ran", file: file, line: line)
        XCTAssertEqual(refusals.value.map(\.reason), [reason], file: file, line: line)

        let next = try RawClient(port: server.port)
        XCTAssertEqual(try next.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200, file: file, line: line)
    }

    func testHTTP11WithoutHostIs400AndClosed() throws {
        try assertRefused("GET / HTTP/1.1\r\n\r\n", reason: "missing_host")
    }

    func testContentLengthWithTransferEncodingIs400AndClosed() throws {
        try assertRefused(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            reason: "content_length_with_transfer_encoding")
    }

    func testDifferingDuplicateContentLengthIs400AndClosed() throws {
        try assertRefused(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            reason: "conflicting_content_length")
    }

    func testUnparseableContentLengthIsOneJSON400AndClosed() throws {
        // Exactly one answer, the JSON one: a value that is not plain digits never frames a body.
        for value in ["+5", "+0", "", "5, 6", "-1", "0x5", "5 5", "five", "99999999999999999999999"] {
            try assertRefusedOnce(
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n\r\nhello!", reason: "invalid_content_length")
        }
    }

    /// Sends `request`; expects exactly one response, a JSON 400, then the close.
    private func assertRefusedOnce(_ request: String, reason: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let refusals = Box<[HTTPRequestRefusal]>([])
        let calls = Box(0)
        let server = try hygieneServer(refusals: refusals, calls: calls)
        let client = try RawClient(port: server.port)
        try client.send(request)
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 400, file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", file: file, line: line)
        XCTAssertEqual(response.text, #"{"error":"bad_request"}"#, file: file, line: line)
        XCTAssertEqual(response.header("Keyward-Error"), "bad_request", file: file, line: line)
        XCTAssertTrue(client.isClosedByServer(), "more bytes after the first response, or left open", file: file, line: line)
        XCTAssertEqual(calls.value, 0, "handler ran", file: file, line: line)
        XCTAssertEqual(refusals.value.map(\.reason), [reason], file: file, line: line)
    }

    // RFC 9112 §5.2: obs-fold is refused. A parser that glues a continuation line onto the previous
    // field's *name* would make a framing field out of an unknown one.

    func testFoldMakingAContentLengthIs400AndClosed() throws {
        try assertRefused("POST / HTTP/1.1\r\nHost: x\r\nContent-Lengt: 5\r\n h\r\n\r\nhello", reason: "obsolete_line_folding")
    }

    func testFoldMakingATransferEncodingIs400AndClosed() throws {
        try assertRefused(
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encodin: chunked\r\n\tg\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            reason: "obsolete_line_folding")
    }

    func testFoldInAnOrdinaryFieldIs400AndClosed() throws {
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX-Note: first\r\n  second\r\n\r\n", reason: "obsolete_line_folding")
    }

    func testEmptyFieldNameIs400AndClosed() throws {
        // A parser that took a line starting with a colon as the end of the head would read the
        // lines after it as a second request.
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\n: nameless\r\n\r\n", reason: "invalid_field_name")
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\n:GET /admin HTTP/1.1\r\nX-A: 1\r\n\r\n", reason: "invalid_field_name")
    }

    func testNULInAFieldValueIs400AndClosed() throws {
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX-Note: a\u{0}b\r\n\r\n", reason: "invalid_field_value")
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX-Note: \u{0}\r\n\r\n", reason: "invalid_field_value")
    }

    func testNULStartingAFieldLineIs400AndClosed() throws {
        // A NUL is not a token byte, wherever it is in the name.
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\n\u{0}X-Note: a\r\n\r\n", reason: "invalid_field_name")
    }

    func testNULInsideAFieldNameIsOneJSON400AndClosed() throws {
        // A NUL is a byte a token does not allow (the name must not end early at it).
        // assertRefused checks the status, the JSON body, Keyward-Error, the close and that no handler ran.
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX-\u{0}Note: a\r\n\r\n", reason: "invalid_field_name")
    }

    func testATLSClientHelloOnThePlainListenerIsRefusedAtOnce() throws {
        // A record header and the first bytes of a ClientHello, no line feed: refused at its first
        // byte, which a method cannot start with, well within the client's 5 s (the head timeout is 60 s).
        try assertRefused("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}", reason: "invalid_method")
    }

    func testByteNotAllowedInAFieldNameIs400AndClosed() throws {
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX\"Note: a\r\n\r\n", reason: "invalid_field_name")
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX-N\u{E9}te: a\r\n\r\n", reason: "invalid_field_name")
    }

    func testDuplicateHostIs400() throws {
        try assertRefused("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", reason: "duplicate_host")
    }

    func testHostThatIsNotAHostAndPortIs400() throws {
        try assertRefused("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", reason: "invalid_host")
    }

    func testTransferCodingOtherThanChunkedIs400() throws {
        try assertRefused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", reason: "unsupported_transfer_encoding")
    }

    func testWhitespaceBeforeTheColonIs400() throws {
        // A parser keeping "Content-Length " as the name would frame no body: "hello" would then
        // be read as a second request.
        try assertRefused("POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello", reason: "invalid_field_name")
    }

    func testMethodThatIsNotATokenIs400() throws {
        try assertRefused("G(E)T / HTTP/1.1\r\nHost: x\r\n\r\n", reason: "invalid_method")
    }

    func testABodyTheClientAbandonsIsReportedAs499() throws {
        let refusals = Box<[HTTPRequestRefusal]>([])
        let calls = Box(0)
        let server = try hygieneServer(refusals: refusals, calls: calls)
        let client = try RawClient(port: server.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        XCTAssertTrue(waitUntil(timeout: 2) { server.activeRequests == 1 }, "the request never began")
        client.closeNow()
        XCTAssertTrue(waitUntil(timeout: 2) { !refusals.value.isEmpty })
        XCTAssertEqual(refusals.value.map(\.status), [499])
        XCTAssertEqual(refusals.value.map(\.reason), ["body_incomplete"])
        XCTAssertEqual(calls.value, 0)
        // A request that completes is never reported.
        XCTAssertEqual(try RawClient(port: server.port).exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
        XCTAssertTrue(staysFalse(for: 0.1) { refusals.value.count != 1 })
        XCTAssertEqual(refusals.value.count, 1)
    }

    func testFragmentInTheTargetIs400() throws {
        // libcurl would cut the forwarded URL at `#`, query parameters added after it included.
        try assertRefused("GET /a?b=1#frag HTTP/1.1\r\nHost: x\r\n\r\n", reason: "invalid_target")
        try assertRefused("GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n", reason: "invalid_target")
    }

    func testWhitespacePaddingCountsTowardTheHeadLimit() throws {
        // Trimmed from the value, but received: 30 KiB of spaces is a 30 KiB head.
        let padding = String(repeating: " ", count: 30_000)
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX-Pad:\(padding)v\r\n\r\n", status: 431, reason: "head_too_large")
    }

    func testMoreThanAHundredFieldsIs431() throws {
        let fields = (0..<100).map { "X-F\($0): v\r\n" }.joined()
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\n\(fields)\r\n", status: 431, reason: "too_many_fields")
    }

    func testTheLargestHeadAllowedStillGetsALargeAnswer() throws {
        // 100 fields and ~16 KiB of head, as far as the limits go: an answer head of 8 KiB still goes out.
        let server = try startServer { _, _, writer in
            let headers = (0..<8).map { ("X-Answer-\($0)", String(repeating: "a", count: 990)) }
            writer.respond(status: 200, headers: headers, body: Array("done".utf8))
        }
        let value = String(repeating: "v", count: 150)
        let fields = (0..<99).map { "X-F\($0): \(value)\r\n" }.joined()
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "done")
        XCTAssertEqual(response.header("X-Answer-7")?.count, 990)
    }

    func testControlCharacterInAFieldValueIs400() throws {
        try assertRefused("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", reason: "invalid_field_value")
    }

    func testFieldNameAndValueCharacterClasses() {
        func token(_ text: String) -> Bool { Array(text.utf8).withUnsafeBytes { HTTPBytes.isToken($0) } }
        func value(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { HTTPBytes.isFieldValue($0) } }
        XCTAssertTrue(token("X-Keyward-Assertion"))
        XCTAssertTrue(token("!#$%&'*+-.^_`|~09azAZ"))
        for bad in ["", "Content-Length ", "X A", "X:A", "X\u{1}", "Ä", "X(A)", "X\"A"] {
            XCTAssertFalse(token(bad), bad)
        }
        XCTAssertTrue(value(Array("a\tb é".utf8)))
        for bad: UInt8 in [0, 1, 0x0A, 0x0D, 0x1F, 0x7F] {
            XCTAssertFalse(value([0x61, bad]), "\(bad)")
        }
    }

    func testIdenticalDuplicateContentLengthIsAccepted() throws {
        let server = try startServer { _, body, writer in writer.respond(status: 200, body: body) }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(response.text, "ok")
    }

    func testHTTP10WithoutHostIsServed() throws {
        let server = try startServer { head, _, writer in
            writer.respond(status: 200, body: Array(head.version == .http10 ? "1.0".utf8 : "1.1".utf8))
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.0\r\n\r\n")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "1.0")
    }

    func testContentLengthOverLimitIs413WithoutReadingTheBody() throws {
        let refusals = Box<[HTTPRequestRefusal]>([])
        let calls = Box(0)
        let server = try hygieneServer(refusals: refusals, calls: calls)
        let client = try RawClient(port: server.port)
        // 10 MiB announced, none sent: the answer must come without the body.
        let response = try client.exchange("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n")
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(response.text, #"{"error":"payload_too_large"}"#)
        XCTAssertTrue(client.isClosedByServer())
        XCTAssertEqual(refusals.value.map(\.reason), ["content_length_over_limit"])
        XCTAssertEqual(calls.value, 0)
    }

    func testExpectContinueOverLimitIs413Directly() throws {
        let server = try startServer(bodyLimit: { _ in 10 }) { _, _, writer in writer.respond(status: 200) }
        let client = try RawClient(port: server.port)
        let response = try client.exchange(
            "PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n")
        XCTAssertEqual(response.status, 413)
    }

    func testChunkedBodyGrowingOverLimitIs413AndClosed() throws {
        let refusals = Box<[HTTPRequestRefusal]>([])
        let calls = Box(0)
        let server = try hygieneServer(refusals: refusals, calls: calls)
        let client = try RawClient(port: server.port)
        try client.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = String(repeating: "a", count: 600)
        try client.send("258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n")   // 1200 bytes > 1024
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(response.text, #"{"error":"payload_too_large"}"#)
        XCTAssertEqual(response.header("Keyward-Error"), "payload_too_large")
        XCTAssertTrue(client.isClosedByServer())
        XCTAssertEqual(refusals.value.map(\.reason), ["chunked_body_over_limit"])
        XCTAssertEqual(calls.value, 0)
    }

    func testHeadOverLimitIs431() throws {
        var configuration = HTTPServerConfiguration(threads: 1)
        configuration.maxHeaderBytes = 1024
        let server = try startServer(configuration: configuration) { _, _, writer in writer.respond(status: 200) }
        let client = try RawClient(port: server.port)
        let big = String(repeating: "v", count: 2000)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n")
        XCTAssertEqual(response.status, 431)
        XCTAssertTrue(client.isClosedByServer())
    }

    func testContentLengthParsing() {
        // The server reads Content-Length with the codec's parser: 1 to 18 ASCII digits. A list in
        // one field ("42, 42") is refused: a repeated length must come as repeated fields
        // (testIdenticalDuplicateContentLengthIsAccepted).
        func parse(_ text: String) -> RequestHeadParser.Step {
            var parser = RequestHeadParser()
            return Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \(text)\r\n\r\n".utf8).withUnsafeBytes { parser.parse($0) }
        }
        func framing(_ text: String) -> RequestBodyFraming? {
            if case .head(let head) = parse(text) { return head.framing }
            return nil
        }
        XCTAssertEqual(framing("42"), .contentLength(42))
        XCTAssertEqual(framing("123456789012345678"), .contentLength(123_456_789_012_345_678))
        for refused in ["42, 42", "4 2", "+5", "-1", "", "0x10", "1234567890123456789"] {
            XCTAssertEqual(parse(refused), .refused(.invalidContentLength), refused)
        }
    }
}

final class HTTPServerHeadLimitTests: XCTestCase {
    func testHeadFarOverTheLimitIs431AndClosed() throws {
        // Refused as its bytes arrive, before the rest is read.
        let calls = Box(0)
        let server = try startServer { _, _, writer in
            calls.mutate { $0 += 1 }
            writer.respond(status: 200)
        }
        let client = try RawClient(port: server.port)
        let big = String(repeating: "v", count: 64 * 1024)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n")
        XCTAssertEqual(response.status, 431)
        XCTAssertEqual(response.text, #"{"error":"bad_request"}"#)
        XCTAssertEqual(response.header("Keyward-Error"), "bad_request")
        XCTAssertTrue(client.isClosedByServer())
        XCTAssertEqual(calls.value, 0)
    }

    func testIPv4Formatting() {
        XCTAssertEqual(SocketAddress.formatIPv4(0x7F00_0001), "127.0.0.1")
        XCTAssertEqual(SocketAddress.formatIPv4(0xFFFF_FFFF), "255.255.255.255")
        XCTAssertEqual(SocketAddress.formatIPv4(0x0A00_6405), "10.0.100.5")
        XCTAssertEqual(SocketAddress.formatIPv4(0), "0.0.0.0")
    }
}
