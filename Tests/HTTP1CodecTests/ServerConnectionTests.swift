import HTTP1Codec
import XCTest

/// Drives a ``ServerConnection`` over `input` as an event loop would (arriving `step` bytes at a
/// time), answering each complete request at once; returns what happened, as text.
private func serve(_ input: String, step: Int = .max, bodyLimit: Int = 1024, closing: Bool = false, clientCloses: Bool = false) -> [String] {
    var connection = ServerConnection()
    let bytes = Array(input.utf8)
    var buffer: [UInt8] = [], offset = 0, log: [String] = [], body: [UInt8] = []
    func receive() -> Bool {
        guard offset < bytes.count else { return false }
        let take = min(step, bytes.count - offset)
        buffer += bytes[offset..<(offset + take)]
        offset += take
        return true
    }
    _ = receive()
    for _ in 0..<10_000 {
        let (event, payload) = buffer.withUnsafeBytes { raw -> (ServerConnection.Event, [UInt8]) in
            let event = connection.next(raw, bodyLimit: { _ in bodyLimit })
            if case .body(let span, _) = event { return (event, Array(raw[span])) }
            if case .head(let head, _, _) = event { return (event, Array(raw[head.target])) }
            return (event, [])
        }
        switch event {
        case .needMore(let consumed):
            buffer.removeFirst(consumed)
            if !receive() {
                if clientCloses, let refusal = connection.clientClosed() { log.append("abandoned \(refusal.status) \(refusal.reason)") }
                log.append("eof")
                return log
            }
        case .head(let head, let sendContinue, let consumed):
            buffer.removeFirst(consumed)
            log.append("head \(String(decoding: payload, as: UTF8.self))\(sendContinue ? " 100-continue" : "")")
            _ = head
        case .body(_, let consumed):
            body += payload
            buffer.removeFirst(consumed)
        case .endOfRequest(let consumed):
            buffer.removeFirst(consumed)
            log.append("request body=\(String(decoding: body, as: UTF8.self))")
            body = []
        case .waitForAnswer:
            let keepAlive = connection.answerSent(closing: closing)
            log.append(keepAlive ? "answered" : "answered, closing")
            if !keepAlive { return log }
        case .refuse(let refusal):
            log.append("refused \(refusal.status) \(refusal.code) \(refusal.reason)")
            if refusal.discardsBodyBytes == 0 { return log }
            log.append("discarding \(refusal.discardsBodyBytes)")
        case .closed:
            log.append("closed")
            return log
        }
    }
    XCTFail("no end")
    return log
}

final class ServerConnectionTests: XCTestCase {
    func testKeepAliveServesRequestsOneAfterAnother() {
        let input = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            + "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
        let expected = ["head /a", "request body=", "answered", "head /b", "request body=hello", "answered",
                        "head /c", "request body=abcde", "answered", "eof"]
        for step in [1, 3, 17, .max] {
            XCTAssertEqual(serve(input, step: step), expected, "step \(step)")
        }
    }

    func testPipelinedRequestWaitsForTheAnswerBeforeItIsRead() {
        // Both requests arrive in one read; the second is read only after the first is answered.
        let log = serve("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(log, ["head /1", "request body=", "answered", "head /2", "request body=", "answered, closing"])
    }

    func testConnectionCloseAndHTTP10EndTheConnectionAfterTheAnswer() {
        XCTAssertEqual(serve("GET / HTTP/1.0\r\n\r\nGET /never HTTP/1.0\r\n\r\n"), ["head /", "request body=", "answered, closing"])
        XCTAssertEqual(serve("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\n\r\n"),
                       ["head /", "request body=", "answered", "head /2", "request body=", "answered, closing"])
        // A drain closes after the answer in progress.
        XCTAssertEqual(serve("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n", closing: true),
                       ["head /", "request body=", "answered, closing"])
    }

    func testBodyOverTheLimitIsRefusedBeforeItIsReadOrAsItGrows() {
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n", bodyLimit: 10),
                       ["refused 413 payload_too_large content_length_over_limit"])
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n", bodyLimit: 10),
                       ["head /", "refused 413 payload_too_large chunked_body_over_limit"])
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789", bodyLimit: 10),
                       ["head /", "request body=0123456789", "answered", "eof"])
    }

    func testADeclaredBodyOverTheLimitIsRefusedThenReadAndDroppedBeforeTheClose() {
        // Refused from the head; the 5 declared bytes are then read and dropped (the pipelined
        // request after them is never read), so the client's upload ends before the close.
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n", step: 3, bodyLimit: 4),
                       ["refused 413 payload_too_large content_length_over_limit", "discarding 5", "closed"])
        // Over the most that is drained, or a client waiting for 100 Continue: closed at once.
        var connection = ServerConnection(maxDiscardedBodyBytes: 4)
        let head = Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n".utf8)
        XCTAssertEqual(head.withUnsafeBytes { connection.next($0, bodyLimit: { _ in 1 }) },
                       .refuse(.init(status: 413, code: "payload_too_large", reason: "content_length_over_limit")))
        XCTAssertEqual(connection.state, .closed)
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", bodyLimit: 4),
                       ["refused 413 payload_too_large content_length_over_limit"])
    }

    func testExpectContinueIsAnsweredOnlyWhenABodyWillBeRead() {
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nok").prefix(2),
                       ["head / 100-continue", "request body=ok"])
        XCTAssertEqual(serve("GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n").first, "head /")
        XCTAssertEqual(serve("POST / HTTP/1.0\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nok").first, "head /")
    }

    func testMalformedHeadsAndBodiesAreRefusedAndClose() {
        XCTAssertEqual(serve("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n"), ["refused 400 bad_request invalid_field_value"])
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
                       ["head /", "refused 400 bad_request chunked_body_malformed"])
        XCTAssertEqual(serve("GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + String(repeating: "v", count: 17_000) + "\r\n\r\n", step: 512),
                       ["refused 431 bad_request head_too_large"])
        XCTAssertEqual(serve("GET / HTTP/2.0\r\nHost: x\r\n\r\n"), ["refused 505 bad_request unsupported_version"])
    }

    func testAClientLeavingMidBodyIsAnAbandonedRequest() {
        XCTAssertEqual(serve("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", clientCloses: true),
                       ["head /", "abandoned 499 body_incomplete", "eof"])
        XCTAssertEqual(serve("GET / HTTP/1.1\r\nHost: x\r\n\r\n", clientCloses: true), ["head /", "request body=", "answered", "eof"])
    }

    func testStatesAlongOneRequest() {
        var connection = ServerConnection()
        XCTAssertEqual(connection.state, .readingHead)
        XCTAssertFalse(connection.requestInProgress)
        let bytes = Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n!".utf8)
        let head = bytes.withUnsafeBytes { connection.next($0, bodyLimit: { _ in 1 }) }
        guard case .head(_, false, let consumed) = head else { return XCTFail("\(head)") }
        XCTAssertEqual(connection.state, .readingBody)
        XCTAssertTrue(connection.requestInProgress)
        let rest = Array(bytes[consumed...])
        XCTAssertEqual(rest.withUnsafeBytes { connection.next($0, bodyLimit: { _ in 1 }) }, .body(0..<1, consumed: 1))
        XCTAssertEqual([UInt8]().withUnsafeBytes { connection.next($0, bodyLimit: { _ in 1 }) }, .endOfRequest(consumed: 0))
        XCTAssertEqual(connection.state, .awaitingAnswer)
        XCTAssertEqual([UInt8]().withUnsafeBytes { connection.next($0, bodyLimit: { _ in 1 }) }, .waitForAnswer)
        XCTAssertTrue(connection.answerSent(closing: false))
        XCTAssertEqual(connection.state, .readingHead)
        XCTAssertFalse(connection.requestInProgress)
        XCTAssertNil(connection.clientClosed())
        XCTAssertEqual(connection.state, .closed)
    }
}
