import HTTP1Codec
import XCTest

final class ResponseHeadWriterTests: XCTestCase {
    private let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    private let keepAlive11 = ResponseHeadWriter.Request(version: .http11, isHead: false, closesConnection: false)

    private func write(
        _ status: Int, _ fields: [(name: String, value: String)] = [], length: Int?, request: ResponseHeadWriter.Request? = nil
    ) throws -> (text: String, framing: ResponseHeadWriter.BodyFraming, closes: Bool) {
        let written = try ResponseHeadWriter.write(
            status: status, fields: fields, bodyLength: length, request: request ?? keepAlive11, date: date).get()
        return (String(decoding: written.bytes, as: UTF8.self), written.framing, written.closesConnection)
    }

    func testFixedLengthAnswerFramesItsBodyAndAddsTheDate() throws {
        let head = try write(200, [("Content-Type", "application/json"), ("Content-Length", "999"), ("Transfer-Encoding", "gzip")], length: 17)
        XCTAssertEqual(head.text, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: \(date)\r\nContent-Length: 17\r\n\r\n")
        XCTAssertEqual(head.framing, .contentLength(17))
        XCTAssertFalse(head.closes)
        XCTAssertEqual(try write(404, [("Date", "Mon, 07 Nov 1994 00:00:00 GMT")], length: 0).text,
                       "HTTP/1.1 404 Not Found\r\nDate: Mon, 07 Nov 1994 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n")
    }

    func testStreamOfUnknownLengthIsChunkedOnHTTP11AndCloseDelimitedOnHTTP10() throws {
        let chunked = try write(200, length: nil)
        XCTAssertEqual(chunked.framing, .chunked)
        XCTAssertTrue(chunked.text.hasSuffix("Transfer-Encoding: chunked\r\n\r\n"))
        let old = try write(200, length: nil, request: .init(version: .http10, isHead: false, closesConnection: false))
        XCTAssertEqual(old.framing, .untilClose)
        XCTAssertTrue(old.closes)
        XCTAssertTrue(old.text.hasSuffix("Connection: close\r\n\r\n"))
        XCTAssertFalse(old.text.contains("Transfer-Encoding"))
        let kept = try write(200, length: 2, request: .init(version: .http10, isHead: false, closesConnection: false))
        XCTAssertTrue(kept.text.hasSuffix("Content-Length: 2\r\nConnection: keep-alive\r\n\r\n"))
        XCTAssertFalse(kept.closes)
    }

    func testNoBodyForHeadNoContentAndNotModified() throws {
        let head = try write(200, length: 42, request: .init(version: .http11, isHead: true, closesConnection: false))
        XCTAssertEqual(head.framing, .none)
        XCTAssertTrue(head.text.contains("Content-Length: 42\r\n"), "HEAD gets the length GET would have")
        let headStream = try write(200, length: nil, request: .init(version: .http11, isHead: true, closesConnection: false))
        XCTAssertEqual(headStream.framing, .none)
        XCTAssertFalse(headStream.text.contains("Transfer-Encoding"))
        for status in [204, 304] {
            let empty = try write(status, length: 10)
            XCTAssertEqual(empty.framing, .none, "\(status)")
            XCTAssertFalse(empty.text.contains("Content-Length"), "\(status)")
        }
    }

    func testConnectionCloseFromTheHandlerOrTheRequestEndsTheConnection() throws {
        let asked = try write(200, [("Connection", "Close")], length: 0)
        XCTAssertTrue(asked.closes)
        XCTAssertEqual(asked.text.components(separatedBy: "Connection").count - 1, 1, "one Connection field")
        XCTAssertTrue(asked.text.hasSuffix("Connection: close\r\n\r\n"))
        let draining = try write(200, length: 0, request: .init(version: .http11, isHead: false, closesConnection: true))
        XCTAssertTrue(draining.closes)
        XCTAssertTrue(draining.text.hasSuffix("Connection: close\r\n\r\n"))
    }

    func testSplittingAndBadStatusesAreRefused() {
        func refusal(_ status: Int, _ fields: [(name: String, value: String)]) -> ResponseHeadWriter.Refusal? {
            if case .failure(let refusal) = ResponseHeadWriter.write(status: status, fields: fields, bodyLength: 0, request: keepAlive11, date: date) {
                return refusal
            }
            return nil
        }
        XCTAssertEqual(refusal(200, [("X-A", "a\r\nSet-Cookie: b")]), .invalidFieldValue)
        XCTAssertEqual(refusal(200, [("X-A", "a\u{0}")]), .invalidFieldValue)
        XCTAssertEqual(refusal(200, [("X A", "a")]), .invalidFieldName)
        XCTAssertEqual(refusal(200, [("", "a")]), .invalidFieldName)
        XCTAssertEqual(refusal(100, []), .invalidStatus)
        XCTAssertEqual(refusal(600, []), .invalidStatus)
        XCTAssertNil(refusal(200, [("X-Empty", "")]))
    }

    func testChunkFramingAndDates() {
        XCTAssertEqual(String(decoding: ChunkFraming.prefix(count: 255), as: UTF8.self), "ff\r\n")
        XCTAssertEqual(String(decoding: ChunkFraming.prefix(count: 1), as: UTF8.self), "1\r\n")
        XCTAssertEqual(String(decoding: ChunkFraming.last, as: UTF8.self), "0\r\n\r\n")
        // RFC 9110 §5.6.7's example, the epoch, a leap day and the end of a year.
        XCTAssertEqual(HTTPDate.imfFixdate(secondsSince1970: 784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPDate.imfFixdate(secondsSince1970: 0), "Thu, 01 Jan 1970 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.imfFixdate(secondsSince1970: 951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.imfFixdate(secondsSince1970: 1_798_761_599), "Thu, 31 Dec 2026 23:59:59 GMT")
    }

    func testAWrittenHeadIsReadBackByTheStrictRules() throws {
        // What the writer sends is a head the strict rules accept, field for field (its status
        // line aside: the parser reads requests, so the line is swapped for a request line).
        let written = try ResponseHeadWriter.write(
            status: 200, fields: [("X-Trace", "a\tb"), ("Cache-Control", "no-store")], bodyLength: 5, request: keepAlive11, date: date).get()
        let fields = written.bytes.drop(while: { $0 != UInt8(ascii: "\n") }).dropFirst()
        let head = try XCTUnwrap(parse(Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8) + fields).head)
        XCTAssertEqual(head.fields.map { $0[0] }, ["Host", "X-Trace", "Cache-Control", "Date", "Content-Length"])
        XCTAssertEqual(head.framing, .contentLength(5))
    }
}
