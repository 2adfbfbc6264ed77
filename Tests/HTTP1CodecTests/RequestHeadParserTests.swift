import HTTP1Codec
import XCTest

final class RequestHeadParserTests: XCTestCase {
    func testPlainRequestIsReadIntoItsParts() throws {
        let text = "GET /p/openai/v1/models?a=1 HTTP/1.1\r\nHost: api.example\r\nX-Note:  spaced out \t\r\n\r\nbody"
        let head = try XCTUnwrap(parse(text).head)
        XCTAssertEqual(head.method, "GET")
        XCTAssertEqual(head.target, "/p/openai/v1/models?a=1")
        XCTAssertEqual(head.version, .http11)
        XCTAssertEqual(head.fields, [["Host", "api.example"], ["X-Note", "spaced out"]])
        XCTAssertEqual(head.framing, .none)
        XCTAssertEqual(head.length, text.utf8.count - 4, "the head ends after the blank line; the body is not part of it")
        XCTAssertFalse(head.closes)
        XCTAssertFalse(head.expectsContinue)
    }

    func testHeadArrivingOneByteAtATimeIsReadTheSame() {
        let text = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n"
        let whole = parse(text)
        XCTAssertEqual(whole.head?.framing, .contentLength(12))
        XCTAssertEqual(whole.head?.expectsContinue, true)
        for step in [1, 2, 3, 7, 64] {
            XCTAssertEqual(parseArriving(Array(text.utf8), step: step), whole, "step \(step)")
        }
        XCTAssertEqual(parse("POST /x HTTP/1.1\r\nHost: x\r\n"), .needMore)
    }

    func testRefusalsArrivingByteByByteMatchWholeOnes() {
        for text in ["GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n", "G(E)T / HTTP/1.1\r\n\r\n",
                     "GET / HTTP/1.1\nHost: x\n\n", "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\n b\r\n\r\n"] {
            let whole = parse(text)
            XCTAssertNotNil(whole.refusal, text)
            XCTAssertEqual(parseArriving(Array(text.utf8), step: 1), whole, text)
        }
    }

    func testABinaryFirstByteIsRefusedAsItArrivesNotAtTheTimeout() {
        // The start of a TLS ClientHello sent to the plain listener: no line feed will come soon.
        let clientHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]
        XCTAssertEqual(parse([0x16]), .refused(.invalidMethod), "its first byte is enough")
        XCTAssertEqual(parseArriving(clientHello, step: 1), .refused(.invalidMethod))
        XCTAssertEqual(parseArriving(Array("\r\n\r\n".utf8) + clientHello, step: 3), .refused(.invalidMethod), "after empty lines too")
        // What may still become a request line waits for its line.
        XCTAssertEqual(parse("GE"), .needMore)
        XCTAssertEqual(parse("\r"), .needMore)
        XCTAssertEqual(parse("\r\nGET /"), .needMore)
    }

    func testFramingRefusals() {
        let cases: [(String, HeadRefusal)] = [
            ("GET / HTTP/1.1\r\n\r\n", .missingHost),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .duplicateHost),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", .duplicateHost),
            ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: a:99999\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: [::1]:70000\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", .invalidHost),
            ("GET / HTTP/1.0\r\nHost: a\"b\r\n\r\n", .invalidHost),
            ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", .contentLengthWithTransferEncoding),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", .contentLengthWithTransferEncoding),
            ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", .conflictingContentLength),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferEncoding),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferEncoding),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", .unsupportedTransferEncoding),
            ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .transferEncodingOnHTTP10),
        ]
        for (text, reason) in cases {
            XCTAssertEqual(parse(text).refusal, reason, text)
        }
    }

    /// RFC 9112 §3.2.2: an absolute-form target is read as its path and query; a target of no form
    /// the server serves (relative, authority-form, another scheme, no path) is refused.
    func testAbsoluteFormIsReadAsItsPathAndOtherFormsAreRefused() {
        for (text, expected) in [("GET http://a/healthz HTTP/1.1", "/healthz"), ("GET HTTPS://a:8443/p/x?y=1 HTTP/1.1", "/p/x?y=1"),
                                 ("OPTIONS * HTTP/1.1", "*"), ("GET /a HTTP/1.1", "/a")] {
            let bytes = Array((text + "\r\nHost: a\r\n\r\n").utf8)
            var parser = RequestHeadParser(limits: RequestHeadLimits())
            guard case .head(let head) = bytes.withUnsafeBytes({ parser.parse($0) }) else { XCTFail(text); continue }
            XCTAssertEqual(String(decoding: bytes[head.target], as: UTF8.self), expected, text)
        }
        for target in ["healthz", "127.0.0.1:8080", "ftp://a/x", "http://a", "http://a?x", "http://u@a/x", "http:///x", "http:/a/x"] {
            XCTAssertEqual(parse("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n").refusal, .invalidTarget, target)
        }
    }

    /// RFC 9112 §3.2: `uri-host [ ":" port ]`, an empty value included.
    func testHostValuesOfAHostAndAPortAreRead() {
        for host in ["", "example.com", "example.com:8443", "127.0.0.1:80", "[::1]", "[::1]:8080", "xn--bcher-kva.example", "a:", "a_b~c", "a:65535", "a:0", "a:000000443"] {
            XCTAssertNotNil(parse("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n").head, host)
        }
    }

    func testContentLengthIsDigitsAloneAndIdenticalRepeatsAreOne() {
        for value in ["+5", "+0", "", "5, 6", "5, 5", "-1", "0x5", "5 5", "five", "99999999999999999999999", "1234567890123456789"] {
            XCTAssertEqual(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n\r\n").refusal, .invalidContentLength, value)
        }
        XCTAssertEqual(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 123456789012345678\r\n\r\n").head?.framing,
                       .contentLength(123_456_789_012_345_678))
        XCTAssertEqual(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n").head?.framing, .contentLength(2))
        XCTAssertEqual(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n").head?.framing, .chunked)
    }

    func testFieldLineRefusals() {
        let base = "GET / HTTP/1.1\r\nHost: x\r\n"
        let cases: [(String, HeadRefusal)] = [
            ("Content-Lengt: 5\r\n h\r\n", .obsoleteLineFolding),
            ("X-Note: first\r\n\tsecond\r\n", .obsoleteLineFolding),
            (": nameless\r\n", .invalidFieldName),
            (":GET /admin HTTP/1.1\r\n", .invalidFieldName),
            ("X-Note: a\u{0}b\r\n", .invalidFieldValue),
            ("X-Note: \u{0}\r\n", .invalidFieldValue),
            ("\u{0}X-Note: a\r\n", .invalidFieldName),
            ("X-No\u{0}te: a\r\n", .invalidFieldName),
            ("X\"Note: a\r\n", .invalidFieldName),
            ("X-N\u{E9}te: a\r\n", .invalidFieldName),
            ("Content-Length : 5\r\n", .invalidFieldName),
            ("X-Note\r\n", .invalidFieldName),
            ("X-A: a\rb\r\n", .invalidFieldValue),
            ("X-A: a\u{7F}b\r\n", .invalidFieldValue),
            ("X-A: a\u{1}b\r\n", .invalidFieldValue),
        ]
        for (line, reason) in cases {
            XCTAssertEqual(parse(base + line + "\r\n").refusal, reason, line.debugDescription)
        }
        XCTAssertEqual(parse("GET / HTTP/1.1\r\n Host: x\r\n\r\n").refusal, .obsoleteLineFolding)
        let accepted = parse(base + "X-A: a\tb caf\u{E9}\r\nX-Empty:\r\n!#$%&'*+-.^_`|~09azAZ: v\r\n\r\n").head
        XCTAssertEqual(accepted?.fields.dropFirst(), [["X-A", "a\tb caf\u{E9}"], ["X-Empty", ""], ["!#$%&'*+-.^_`|~09azAZ", "v"]])
    }

    func testLineEndsAreCRLFAlone() {
        XCTAssertEqual(parse("GET / HTTP/1.1\nHost: x\n\n").refusal, .bareLineFeed)
        XCTAssertEqual(parse("GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n").refusal, .bareLineFeed)
        XCTAssertEqual(parse("GET / HTTP/1.1\r\nHost: x\r\n\n").refusal, .bareLineFeed)
        XCTAssertEqual(parse("GET / HTTP/1.1\r\nHost: x\rX-A: 1\r\n\r\n").refusal, .invalidFieldValue)
        // RFC 9112 §2.2: empty lines before the request line are skipped.
        XCTAssertEqual(parse("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n").head?.target, "/")
    }

    func testRequestLineRefusals() {
        let cases: [(String, HeadRefusal)] = [
            ("G(E)T / HTTP/1.1", .invalidMethod),
            (" / HTTP/1.1", .invalidMethod),
            ("GET\t/ HTTP/1.1", .invalidMethod),
            ("GET  / HTTP/1.1", .invalidTarget),
            ("GET /a?b=1#frag HTTP/1.1", .invalidTarget),
            ("GET /a#b HTTP/1.1", .invalidTarget),
            ("GET /caf\u{E9} HTTP/1.1", .invalidTarget),
            ("GET /a\u{7F}b HTTP/1.1", .invalidTarget),
            ("GET * HTTP/1.1", .invalidTarget),
            ("GET", .invalidTarget),
            ("GET /", .invalidVersion),
            ("GET /  HTTP/1.1", .invalidVersion),
            ("GET / HTTP/1.1 ", .invalidVersion),
            ("GET / http/1.1", .invalidVersion),
            ("GET / HTTP/1.10", .invalidVersion),
            ("GET / HTTP/x.y", .invalidVersion),
            ("GET / HTTP/2.0", .unsupportedVersion),
            ("GET / HTTP/0.9", .unsupportedVersion),
        ]
        for (line, reason) in cases {
            XCTAssertEqual(parse(line + "\r\nHost: x\r\n\r\n").refusal, reason, line.debugDescription)
        }
        XCTAssertEqual(HeadRefusal.unsupportedVersion.status, 505)
        XCTAssertEqual(parse("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n").head?.target, "*")
        XCTAssertEqual(parse("GET http://a.example/p/x HTTP/1.1\r\nHost: a.example\r\n\r\n").head?.target, "/p/x")
        XCTAssertEqual(parse("GET / HTTP/1.2\r\nHost: x\r\n\r\n").head?.version, .http11)
        XCTAssertEqual(parse("get / HTTP/1.1\r\nHost: x\r\n\r\n").head?.method, "get")
    }

    func testKeepAliveIsReadOffTheVersionAndConnectionOptions() {
        XCTAssertEqual(parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n").head?.closes, false)
        XCTAssertEqual(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n").head?.closes, true)
        XCTAssertEqual(parse("GET / HTTP/1.0\r\n\r\n").head?.closes, true)
        XCTAssertEqual(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").head?.closes, false)
        XCTAssertEqual(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n").head?.closes, true)
    }

    func testHeadLimitIsExactToTheByte() {
        let prefix = "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: "
        let fill = 16 * 1024 - prefix.utf8.count - 2
        let atLimit = prefix + String(repeating: "v", count: fill) + "\r\n\r\n"
        XCTAssertEqual(parse(atLimit).head?.length, 16 * 1024 + 2)
        let overLimit = prefix + String(repeating: "v", count: fill + 1) + "\r\n\r\n"
        XCTAssertEqual(parse(overLimit).refusal, .headTooLarge)
        XCTAssertEqual(HeadRefusal.headTooLarge.status, 431)
        // Refused as soon as it cannot fit, without waiting for its end.
        let endless = prefix + String(repeating: "v", count: 20_000)
        XCTAssertEqual(parse(endless).refusal, .headTooLarge)
        XCTAssertEqual(parseArriving(Array(endless.utf8), step: 1000), .refused(.headTooLarge))
        // Whitespace is received too: padding counts.
        XCTAssertEqual(parse("GET / HTTP/1.1\r\nHost: x\r\nX-Pad:" + String(repeating: " ", count: 30_000) + "v\r\n\r\n").refusal, .headTooLarge)
        XCTAssertEqual(parse(String(repeating: "\r\n", count: 9000) + "GET / HTTP/1.1\r\nHost: x\r\n\r\n").refusal, .headTooLarge)
    }

    func testFieldCountAndLineLimits() {
        let base = "GET / HTTP/1.1\r\nHost: x\r\n"
        let ninetyNine = (0..<99).map { "X-F\($0): v\r\n" }.joined()
        XCTAssertEqual(parse(base + ninetyNine + "\r\n").head?.fields.count, 100)
        XCTAssertEqual(parse(base + ninetyNine + "X-Last: v\r\n\r\n").refusal, .tooManyFields)
        let limits = RequestHeadLimits(maxLineBytes: 64)
        XCTAssertEqual(parse(base + "X-A: " + String(repeating: "a", count: 57) + "\r\n\r\n", limits: limits).head?.fields.count, 2)
        XCTAssertEqual(parse(base + "X-A: " + String(repeating: "a", count: 58) + "\r\n\r\n", limits: limits).refusal, .lineTooLarge)
        XCTAssertEqual(parse(base + "X-A: " + String(repeating: "a", count: 100), limits: limits).refusal, .lineTooLarge)
    }

    func testALimitIsReportedTheSameHoweverTheBytesArrive() {
        // Found by fuzz-http1: a line over both limits was reported as over the line limit when it
        // arrived in pieces and over the head limit when it came whole. Each limit is now placed at
        // the byte that breaks it; the earlier one is reported.
        let limits = RequestHeadLimits(maxHeadBytes: 1024, maxFields: 16, maxLineBytes: 512)
        let cookie = (0..<200).map { "c\($0)=v" }.joined(separator: "; ")
        let text = "GET / HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\r\n"
        let whole = parse(text, limits: limits)
        XCTAssertEqual(whole, .refused(.lineTooLarge))
        for step in [1, 9, 100, 600] {
            XCTAssertEqual(parseArriving(Array(text.utf8), step: step, limits: limits), whole, "step \(step)")
        }
        let longRequestLine = "GET /" + String(repeating: "a", count: 1100) + " HTTP/1.1\r\nHost: x\r\n\r\n"
        let tight = RequestHeadLimits(maxHeadBytes: 1024, maxFields: 16, maxLineBytes: 1050)
        XCTAssertEqual(parse(longRequestLine, limits: tight), .refused(.headTooLarge))
        XCTAssertEqual(parseArriving(Array(longRequestLine.utf8), step: 7, limits: tight), .refused(.headTooLarge))
    }

    func testTenThousandQueryArgumentsWithinTheHeadLimitAreServed() throws {
        let query = (0..<10_000).map { "a\($0 % 10)" }.joined(separator: "&")
        let limits = RequestHeadLimits(maxHeadBytes: 64 * 1024)
        let head = try XCTUnwrap(parse("GET /p/x?\(query) HTTP/1.1\r\nHost: x\r\n\r\n", limits: limits).head)
        XCTAssertEqual(head.target.utf8.count, "/p/x?".utf8.count + query.utf8.count)
        XCTAssertEqual(head.target.split(separator: "&").count, 10_000)
        // Within the default 16 KiB: 10,000 empty arguments (9,999 `&`).
        let empty = String(repeating: "&", count: 9_999)
        let defaultHead = try XCTUnwrap(parse("GET /p/x?\(empty) HTTP/1.1\r\nHost: x\r\n\r\n").head)
        XCTAssertEqual(defaultHead.target.utf8.filter { $0 == UInt8(ascii: "&") }.count, 9_999)
    }

    func testAFinishedParserRepeatsItsAnswer() {
        var parser = RequestHeadParser()
        let bytes = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n".utf8)
        let first = bytes.withUnsafeBytes { parser.parse($0) }
        let again = bytes.withUnsafeBytes { parser.parse($0) }
        XCTAssertEqual(first, again)
        guard case .head(let head) = first else { return XCTFail("\(first)") }
        XCTAssertEqual(head.length, 27, "a pipelined request after the head is left for the next parser")
    }
}
