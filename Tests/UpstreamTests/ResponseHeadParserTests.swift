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
        ] {
            XCTAssertThrowsError(try feed(lines), "\(lines)") {
                XCTAssertEqual(($0 as? UpstreamError)?.reason, "upstream_protocol")
            }
        }
    }
}
