import HTTP1Codec
import XCTest

/// Decodes `body` fed in pieces of `step` bytes: the data, and the final step.
private func decode(_ body: String, step: Int = .max, decoder: ChunkedBodyDecoder = ChunkedBodyDecoder()) -> (data: String, end: ChunkedBodyDecoder.Step?, rest: String) {
    var decoder = decoder
    let bytes = Array(body.utf8)
    var data: [UInt8] = []
    var offset = 0
    var pending: [UInt8] = []
    while offset < bytes.count || !pending.isEmpty {
        let take = min(step, bytes.count - offset)
        pending += bytes[offset..<(offset + take)]
        offset += take
        var consumedAll = false
        while !consumedAll {
            let result = pending.withUnsafeBytes { input -> (ChunkedBodyDecoder.Step, Int, [UInt8]) in
                let step = decoder.decode(input)
                switch step {
                case .data(let span, let consumed): return (step, consumed, Array(input[span]))
                case .end(let consumed): return (step, consumed, [])
                case .needMore: return (step, input.count, [])
                case .refused: return (step, 0, [])
                }
            }
            data += result.2
            pending.removeFirst(result.1)
            switch result.0 {
            case .data: consumedAll = pending.isEmpty
            case .needMore: consumedAll = true
            case .end, .refused:
                return (String(decoding: data, as: UTF8.self), result.0, String(decoding: pending + bytes[offset...], as: UTF8.self))
            }
        }
        if offset == bytes.count, pending.isEmpty { break }
    }
    return (String(decoding: data, as: UTF8.self), nil, "")
}

final class ChunkedBodyDecoderTests: XCTestCase {
    func testChunksAreJoinedAndTheNextRequestIsLeft() {
        let body = "5\r\nhello\r\n7;name=value\r\n, world\r\n0\r\n\r\nGET / HTTP/1.1\r\n"
        for step in [1, 2, 5, .max] {
            let result = decode(body, step: step)
            XCTAssertEqual(result.data, "hello, world", "step \(step)")
            if case .end = result.end {} else { XCTFail("step \(step): \(String(describing: result.end))") }
            XCTAssertEqual(result.rest, "GET / HTTP/1.1\r\n", "step \(step)")
        }
    }

    func testTrailersAreReadAndDropped() {
        let result = decode("3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: two\r\n\r\n")
        XCTAssertEqual(result.data, "abc")
        if case .end = result.end {} else { XCTFail("\(String(describing: result.end))") }
        XCTAssertEqual(decode("0\r\nX Bad: 1\r\n\r\n").end, .refused(.malformedTrailer))
        XCTAssertEqual(decode("0\r\nX: a\u{0}\r\n\r\n").end, .refused(.malformedTrailer))
        let big = decode("0\r\nX: " + String(repeating: "a", count: 100) + "\r\n\r\n", decoder: ChunkedBodyDecoder(maxTrailerBytes: 64))
        XCTAssertEqual(big.end, .refused(.trailerTooLarge))
        XCTAssertEqual(ChunkedBodyRefusal.trailerTooLarge.status, 431)
    }

    func testMalformedFraming() {
        let cases: [(String, ChunkedBodyRefusal)] = [
            ("x\r\n", .malformed),
            ("\r\n", .malformed),
            ("-1\r\n", .malformed),
            ("5\nhello\r\n", .malformed),
            ("5\r\nhelloX\r\n", .malformed),
            ("5\r\nhello\n0\r\n\r\n", .malformed),
            ("5;a\u{1}b\r\n", .malformed),
            ("0\r\n\n", .malformed),
            ("1000000000000000\r\n", .chunkSizeTooLarge),
        ]
        for (body, reason) in cases {
            XCTAssertEqual(decode(body).end, .refused(reason), body.debugDescription)
        }
        XCTAssertEqual(decode("5;" + String(repeating: "e", count: 100) + "\r\n", decoder: ChunkedBodyDecoder(maxLineBytes: 32)).end,
                       .refused(.lineTooLarge))
        XCTAssertEqual(ChunkedBodyRefusal.chunkSizeTooLarge.status, 413)
    }

    func testLeadingZerosDoNotCountTowardTheSizeLimit() {
        var decoder = ChunkedBodyDecoder()
        let step = Array("0000000000000000000002\r\nab".utf8).withUnsafeBytes { decoder.decode($0) }
        XCTAssertEqual(step, .data(24..<26, consumed: 26))
        XCTAssertEqual(decode("00000000000000001000000000000000\r\n").end, .refused(.chunkSizeTooLarge))
    }

    func testLargestSizeIsFifteenHexDigits() {
        var decoder = ChunkedBodyDecoder()
        let step = Array("fffffffffffffff\r\nab".utf8).withUnsafeBytes { decoder.decode($0) }
        XCTAssertEqual(step, .data(17..<19, consumed: 19))
        XCTAssertFalse(decoder.isComplete)
    }
}
