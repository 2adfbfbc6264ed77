import XCTest
@testable import Upstream

/// The header-line parser on its own (RFC 9112 §4, §5).
final class ResponseHeadParserTests: XCTestCase {
    private func feed(_ lines: [String]) throws -> (events: [ResponseHeadParser.Event], parser: ResponseHeadParser) {
        var parser = ResponseHeadParser()
        var events: [ResponseHeadParser.Event] = []
        for line in lines {
            let bytes = Array(line.utf8)
            let event = try bytes.withUnsafeBytes { try parser.consume(line: $0) }
            events.append(event)
        }
        return (events, parser)
    }

    func testFinalHeadFollowsInterimHeads() throws {
        let (events, parser) = try feed([
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/1.1 404 Not Found\r\n", "A: 1\r\n", "\r\n",
            "Trailer-After: ignored\r\n",
        ])
        XCTAssertEqual(events, [.none, .none, .none, .none, .head(status: 404), .none])
        XCTAssertEqual(parser.headers.lines, ["A: 1"])
        XCTAssertTrue(parser.isComplete)
    }

    func testStatusLineWithoutReasonAndBareLF() throws {
        let (events, _) = try feed(["HTTP/1.1 204\n", "\n"])
        XCTAssertEqual(events.last, .head(status: 204))
    }

    func testFoldedValueJoinsWithOneSpace() throws {
        let (_, parser) = try feed(["HTTP/1.1 200 OK\r\n", "X: a\r\n", " \t b \r\n", "\r\n"])
        XCTAssertEqual(parser.headers.lines, ["X: a b"])
    }

    func testEmptyValueAndColonInValue() throws {
        let (_, parser) = try feed(["HTTP/1.1 200 OK\r\n", "Empty:\r\n", "Link: <http://a/b>; rel=x\r\n", "\r\n"])
        XCTAssertEqual(parser.headers.map(\.0), ["Empty", "Link"])
        XCTAssertEqual(parser.headers.map(\.1), ["", "<http://a/b>; rel=x"])
    }

    func testObsTextValueKeepsEveryByteAsLatin1() throws {
        var parser = ResponseHeadParser()
        for line in [Array("HTTP/1.1 200 OK\r\n".utf8), Array("X: caf".utf8) + [0xE9] + Array("\r\n".utf8), Array("\r\n".utf8)] {
            _ = try line.withUnsafeBytes { try parser.consume(line: $0) }
        }
        XCTAssertEqual(parser.headers.first?.1, "caf\u{E9}")
    }

    func testMalformedLinesAreProtocolErrors() {
        for lines in [
            ["HTTP/1.1 20 OK\r\n"], ["ICY 200 OK\r\n"], ["HTTP/1.1 999 Bad\r\n"], ["HTTP/1.1 200OK\r\n"],
            ["HTTP/1.1 200 OK\r\n", "no colon here\r\n"], ["HTTP/1.1 200 OK\r\n", "Bad Name: x\r\n"],
            ["HTTP/1.1 200 OK\r\n", " folded first\r\n"],
            // Bytes no field value may hold: a bare CR would split the line when sent on, a NUL cut it.
            ["HTTP/1.1 200 OK\r\n", "X-A: a\rInjected: yes\r\n"], ["HTTP/1.1 200 OK\r\n", "X-A: a\u{0}b\r\n"],
            ["HTTP/1.1 200 OK\r\n", "X-A: a\r\n", " b\u{1}\r\n"],
            // Framing a proxy cannot trust (RFC 9112 §6.3): lengths that disagree or are not numbers.
            ["HTTP/1.1 200 OK\r\n", "Content-Length: 2\r\n", "Content-Length: 3\r\n", "\r\n"],
            ["HTTP/1.1 200 OK\r\n", "Content-Length: 2, 3\r\n", "\r\n"],
            ["HTTP/1.1 200 OK\r\n", "Content-Length: -1\r\n", "\r\n"],
            ["HTTP/1.1 200 OK\r\n", "content-length: \r\n", "\r\n"],
            // A length beside a coding (§6.3 item 3, "ought to be handled as an error"), in either order.
            ["HTTP/1.1 200 OK\r\n", "Content-Length: 9\r\n", "Transfer-Encoding: chunked\r\n", "\r\n"],
            ["HTTP/1.1 200 OK\r\n", "Transfer-Encoding: chunked\r\n", "content-length: 2\r\n", "\r\n"],
        ] {
            XCTAssertThrowsError(try feed(lines), "\(lines)") {
                XCTAssertEqual(($0 as? UpstreamError)?.reason, "upstream_protocol")
            }
        }
    }

    func testRepeatedEqualLengthsAreAccepted() throws {
        let (events, _) = try feed(["HTTP/1.1 200 OK\r\n", "Content-Length: 2, 2\r\n", "Content-Length: 2\r\n", "\r\n"])
        XCTAssertEqual(events.last, .head(status: 200))
        let (coded, _) = try feed(["HTTP/1.1 200 OK\r\n", "Transfer-Encoding: chunked\r\n", "\r\n"])
        XCTAssertEqual(coded.last, .head(status: 200))
    }

    func testATransferCodingOtherThanOneChunkedIsAProtocolError() {
        // libcurl removes the chunked framing only: any other coding would reach the client unlabelled.
        for codings in [["gzip, chunked"], ["chunked, chunked"], ["identity"], ["gzip"], ["gzip", "chunked"],
                        ["chunked", "chunked"], [""], [" , "]] {
            let lines = ["HTTP/1.1 200 OK\r\n"] + codings.map { "Transfer-Encoding: \($0)\r\n" } + ["\r\n"]
            XCTAssertThrowsError(try feed(lines), "\(codings)") {
                XCTAssertEqual(($0 as? UpstreamError)?.reason, "upstream_protocol")
            }
        }
    }

    func testOneChunkedCodingInAnyCaseOrSpacingIsAccepted() throws {
        for value in ["Chunked", " chunked ", "CHUNKED", "\tchunked", "chunked, ", ", chunked"] {
            let (events, parser) = try feed(["HTTP/1.1 200 OK\r\n", "Transfer-Encoding:\(value)\r\n", "\r\n"])
            XCTAssertEqual(events.last, .head(status: 200), "\(value)")
            XCTAssertEqual(parser.headers.count, 1)
        }
    }

    func testAHeadOverEightKibibytesIsAProtocolError() throws {
        let field = "X-Big: " + String(repeating: "v", count: 1000) + "\r\n"
        let lines = ["HTTP/1.1 200 OK\r\n"] + Array(repeating: field, count: 8) + ["\r\n"]
        XCTAssertNoThrow(try feed(lines))  // 8,091 bytes
        XCTAssertThrowsError(try feed(["HTTP/1.1 200 OK\r\n"] + Array(repeating: field, count: 9) + ["\r\n"])) {
            XCTAssertEqual(($0 as? UpstreamError)?.reason, "upstream_protocol")
        }
        // Interim heads do not count toward the final one.
        let interim = ["HTTP/1.1 103 Early Hints\r\n"] + Array(repeating: field, count: 7) + ["\r\n"]
        XCTAssertNoThrow(try feed(interim + lines))
    }
}
