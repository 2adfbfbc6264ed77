import Foundation
import HTTPServer
import TestWaiting
import XCTest

final class HTTPServerStreamTests: XCTestCase {
    func testStreamedChunksArriveSeparatelyInTime() throws {
        let firstReceived = DispatchSemaphore(value: 0)
        let secondWritten = Box(false)
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream")])
            onAnotherThread {
                stream.write(Array("data: 1\n\n".utf8))
                _ = firstReceived.wait(timeout: .now() + 5)
                secondWritten.value = true
                stream.write(Array("data: 2\n\n".utf8))
                stream.finish()
            }
        }
        let client = try RawClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readHead()
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Type"), "text/event-stream")
        XCTAssertEqual(head.header("Transfer-Encoding")?.lowercased(), "chunked")
        XCTAssertEqual(try client.readChunk().map { String(decoding: $0, as: UTF8.self) }, "data: 1\n\n")
        XCTAssertFalse(secondWritten.value, "the first chunk must arrive before the second is written")
        firstReceived.signal()
        XCTAssertEqual(try client.readChunk().map { String(decoding: $0, as: UTF8.self) }, "data: 2\n\n")
        XCTAssertNil(try client.readChunk())
        // Keep-alive survives a finished stream.
        try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readHead().status, 200)
    }

    func testStreamWrittenInsideTheHandlerBeforeItReturns() throws {
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200)
            stream.write(Array("abc".utf8))
            stream.write(Array("def".utf8))
            stream.finish()
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(response.text, "abcdef")
    }

    func testDeclaredContentLengthStreamIsSentWithThatLength() throws {
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200, headers: [("Content-Length", "10")])
            onAnotherThread {
                stream.write(Array("01234".utf8))
                Thread.sleep(forTimeInterval: 0.05)  // a paced producer: the behaviour under test
                stream.write(Array("56789".utf8))
                stream.finish()
            }
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(response.header("Content-Length"), "10")
        XCTAssertNil(response.header("Transfer-Encoding"))
        XCTAssertEqual(response.text, "0123456789")
    }

    func testAbortCutsTheConnectionWithoutACleanEnd() throws {
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200)
            onAnotherThread {
                stream.write(Array("partial".utf8))
                Thread.sleep(forTimeInterval: 0.1)  // the abort comes after the bytes went out: the behaviour under test
                stream.abort()
            }
        }
        let client = try RawClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readHead().status, 200)
        XCTAssertEqual(try client.readChunk(), Array("partial".utf8))
        XCTAssertThrowsError(try client.readChunk(), "an aborted stream must not end cleanly")
    }

    func testSlowReaderMakesWriteReturnFalseAndBufferStaysBounded() throws {
        let highWater = 64 * 1024
        let chunkSize = 251 * 64          // whole periods of the byte pattern: every chunk is the same
        let total = chunkSize * 1024      // ≈ 16 MB: more than loopback's socket buffers can absorb
        var configuration = HTTPServerConfiguration(threads: 2)
        configuration.streamHighWaterBytes = highWater
        let refusedWrites = Box(0)
        let maxBuffered = Box(0)
        let producerDone = DispatchSemaphore(value: 0)
        let producerFailed = Box(false)
        let server = try startServer(configuration: configuration) { _, _, writer in
            let stream = writer.startStream(status: 200, headers: [("Content-Length", String(total))])
            let writable = DispatchSemaphore(value: 0)
            stream.onWritable = { writable.signal() }
            onAnotherThread {
                let chunk = (0..<chunkSize).map { UInt8(truncatingIfNeeded: $0 % 251) }
                var sent = 0
                while sent < total {
                    let accepted = stream.write(chunk)
                    sent += chunkSize
                    maxBuffered.mutate { $0 = max($0, stream.bufferedBytes) }
                    if !accepted {
                        refusedWrites.mutate { $0 += 1 }
                        if writable.wait(timeout: .now() + 10) == .timedOut {
                            producerFailed.value = true
                            break
                        }
                    }
                }
                stream.finish()
                producerDone.signal()
            }
        }
        let client = try RawClient(port: server.port, receiveTimeout: 10, receiveBuffer: 16 * 1024)
        try client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        // Do not read: the producer must be told to stop (once the kernel's socket buffers are
        // full), not allowed to buffer everything.
        XCTAssertTrue(waitUntil(timeout: 5) { refusedWrites.value > 0 }, "write never returned false for a client that does not read")
        // For a while more the producer keeps trying; the buffer must stay bounded all along.
        XCTAssertTrue(staysFalse(for: 0.2) { maxBuffered.value > highWater + chunkSize })
        XCTAssertGreaterThanOrEqual(refusedWrites.value, 1, "write never returned false for a client that does not read")
        XCTAssertLessThanOrEqual(maxBuffered.value, highWater + chunkSize)

        let head = try client.readHead()
        XCTAssertEqual(head.status, 200)
        let body = try client.readBytes(total)
        XCTAssertEqual(producerDone.wait(timeout: .now() + 10), .success)
        XCTAssertFalse(producerFailed.value, "onWritable never fired after the client read")
        XCTAssertEqual(body.count, total)
        XCTAssertTrue(body.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset % 251) })
        XCTAssertLessThanOrEqual(maxBuffered.value, highWater + chunkSize, "buffer grew past the high-water mark plus one write")
    }

    func testOnCloseFiresWithinASecondOfClientDisconnectMidStream() throws {
        let closed = DispatchSemaphore(value: 0)
        let closedAt = Box<Date?>(nil)
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream")])
            stream.onClose = {
                closedAt.value = Date()
                closed.signal()
            }
            onAnotherThread {
                // A producer with a heartbeat: every 100 ms, until the stream refuses.
                for _ in 0..<100 {
                    _ = stream.write(Array(": ping\n\n".utf8))
                    if closedAt.value != nil { return }
                    Thread.sleep(forTimeInterval: 0.1)  // the heartbeat's pace: the behaviour under test
                }
            }
        }
        let client = try RawClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readHead().status, 200)
        XCTAssertNotNil(try client.readChunk())
        let leftAt = Date()
        client.closeNow()
        XCTAssertEqual(closed.wait(timeout: .now() + 3), .success, "onClose never fired")
        let delay = try XCTUnwrap(closedAt.value).timeIntervalSince(leftAt)
        XCTAssertLessThan(delay, 1.0)
    }

    func testWriteAfterClientLeftReturnsFalseAndLateOnCloseFiresAtOnce() throws {
        let streamBox = Box<ResponseStream?>(nil)
        let gone = DispatchSemaphore(value: 0)
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200)
            streamBox.value = stream
            stream.onClose = { gone.signal() }
            stream.write(Array("x".utf8))
        }
        let client = try RawClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readHead().status, 200)
        XCTAssertNotNil(try client.readChunk())
        client.closeNow()
        let stream = try XCTUnwrap(streamBox.value)
        // The server notices the close on its next look at the socket: write until it has.
        let refused = waitUntil(timeout: 3, pollMillis: 20) { !stream.write(Array("y".utf8)) }
        XCTAssertTrue(refused)
        XCTAssertEqual(gone.wait(timeout: .now() + 3), .success)
        let late = DispatchSemaphore(value: 0)
        stream.onClose = { late.signal() }
        XCTAssertEqual(late.wait(timeout: .now()), .success, "onClose set after the close must fire at once")
    }

    func testStopWithOpenStreamsAndPendingAnswersNeitherCrashesNorHangs() throws {
        let streams = Box<[ResponseStream]>([])
        let writers = Box<[ResponseWriter]>([])
        let closes = Box(0)
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 2), bodyLimit: { _ in 0 }) { head, _, writer in
            if head.path == "/late" {
                writers.mutate { $0.append(writer) }
                return
            }
            let stream = writer.startStream(status: 200)
            stream.onClose = { closes.mutate { $0 += 1 } }
            stream.write(Array("hello".utf8))   // then idle: the connection sleeps with an empty buffer
            streams.mutate { $0.append(stream) }
        }
        try server.start()
        var clients: [RawClient] = []
        for _ in 0..<3 {
            let client = try RawClient(port: server.port)
            try client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertEqual(try client.readHead().status, 200)
            XCTAssertNotNil(try client.readChunk())
            clients.append(client)
        }
        let late = try RawClient(port: server.port)
        try late.send("GET /late HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(waitUntil(timeout: 2) { !writers.value.isEmpty })
        XCTAssertEqual(writers.value.count, 1)

        let stopped = DispatchSemaphore(value: 0)
        onAnotherThread {
            server.stop()
            stopped.signal()
        }
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success, "stop() hung")
        XCTAssertEqual(closes.value, 3)
        // Answering after stop does nothing and does not crash.
        writers.value.first?.respond(status: 200)
        XCTAssertFalse(streams.value.first?.write([1]) ?? true)
        XCTAssertTrue(late.isClosedByServer())
        server.stop()
    }

    func testCallbacksThatHoldTheLastReferenceToTheirStreamAreReleasedSafely() throws {
        // The stream lives only in its own callbacks: releasing them at completion runs the
        // stream's deinit, which must not re-enter the request's lock (a trap in debug builds).
        let server = try startServer { head, _, writer in
            let stream = writer.startStream(status: 200)
            stream.onClose = { _ = stream.bufferedBytes }
            stream.onWritable = { _ = stream.bufferedBytes }
            stream.write(Array("x".utf8))
            if head.path == "/finish" { stream.finish() }
        }
        let client = try RawClient(port: server.port)
        XCTAssertEqual(try client.exchange("GET /finish HTTP/1.1\r\nHost: x\r\n\r\n").text, "x")
        let leaving = try RawClient(port: server.port)
        try leaving.send("GET /open HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try leaving.readHead().status, 200)
        leaving.closeNow()
        // The left request completes (its callbacks released) before the next one is checked.
        XCTAssertTrue(waitUntil(timeout: 3) { server.activeRequests == 0 })
        XCTAssertEqual(try client.exchange("GET /finish HTTP/1.1\r\nHost: x\r\n\r\n").text, "x")
    }

    func testHeadRequestToAStreamGetsTheHeadOnlyAndTheProducerIsToldToStop() throws {
        let closed = DispatchSemaphore(value: 0)
        let producers = Box<[ResponseStream]>([])
        let server = try startServer { head, _, writer in
            let stream = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream")])
            stream.onClose = { closed.signal() }
            producers.mutate { $0.append(stream) }   // a producer still holding its stream
            if head.method != "HEAD" {
                stream.write(Array("body".utf8))
                stream.finish()
            }
        }
        let client = try RawClient(port: server.port)
        try client.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse(headRequest: true)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "text/event-stream")
        XCTAssertEqual(response.header("Connection")?.lowercased(), "close")
        // No body is sent for HEAD (RFC 9110 §9.3.2): the producer learns it through onClose.
        XCTAssertEqual(closed.wait(timeout: .now() + 2), .success)
        // Nothing follows a HEAD answer's head that a next response could be poisoned with.
        let next = try RawClient(port: server.port)
        XCTAssertEqual(try next.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").text, "body")
    }

    func testHTTP10StreamIsDelimitedByClose() throws {
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200)
            onAnotherThread {
                stream.write(Array("one ".utf8))
                Thread.sleep(forTimeInterval: 0.05)  // a paced producer: the behaviour under test
                stream.write(Array("two".utf8))
                stream.finish()
            }
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.0\r\n\r\n")
        XCTAssertNil(response.header("Transfer-Encoding"), "no chunking for HTTP/1.0 (RFC 9112 §7)")
        XCTAssertEqual(response.text, "one two")
    }

    /// An abort that comes before the first body byte went out still closes the connection,
    /// every time: the client must never be left waiting on an open one.
    func testAbortRightAfterAWriteAlwaysClosesTheConnection() throws {
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200, headers: [("Content-Length", "100")])
            onAnotherThread {
                stream.write(Array("only forty bytes of a hundred, then gone".utf8))
                stream.abort()
            }
        }
        for round in 0..<300 {
            let client = try RawClient(port: server.port, receiveTimeout: 3)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            guard client.waitForClose() else {
                XCTFail("round \(round): the connection stayed open after the stream was aborted")
                return
            }
        }
    }

    /// A server whose every answer is a stream of `body`, written in pieces from another thread
    /// as fast as the stream takes them, then aborted.
    private func serverThatAborts(after body: [UInt8], inPiecesOf piece: Int, headers: [(String, String)]) throws -> HTTPServer {
        try startServer { _, _, writer in
            let stream = writer.startStream(status: 200, headers: headers)
            onAnotherThread {
                for start in stride(from: 0, to: body.count, by: piece) {
                    stream.write(Array(body[start..<min(start + piece, body.count)]))
                }
                stream.abort()
            }
        }
    }

    /// An abort that comes while bytes are still queued sends them all, then closes: the client of
    /// a declared length sees exactly the bytes written, fewer than the length, then the close.
    func testAbortAfterQueuedBytesDeliversThemAllThenClosesWithDeclaredLength() throws {
        let body = Self.patternBody(50_000)
        let server = try serverThatAborts(after: body, inPiecesOf: 5_000, headers: [("Content-Length", "100000")])
        for round in 0..<20 {
            let client = try RawClient(port: server.port, receiveTimeout: 5)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try client.readHead()
            XCTAssertEqual(head.status, 200)
            XCTAssertEqual(head.header("Content-Length"), "100000")
            let received = try client.readToEnd()
            XCTAssertEqual(received.count, body.count, "round \(round): every byte written before the abort must arrive")
            XCTAssertTrue(received == body, "round \(round): the bytes must arrive unchanged and in order")
        }
    }

    /// The same for a chunked stream: every chunk written before the abort arrives, then the
    /// connection closes without the last chunk (RFC 9112 §7.1), so the client sees the truncation.
    func testAbortAfterQueuedBytesDeliversThemAllThenClosesWithoutTheLastChunk() throws {
        let body = Self.patternBody(50_000)
        let server = try serverThatAborts(after: body, inPiecesOf: 1_008, headers: [("Content-Type", "text/event-stream")])
        for round in 0..<20 {
            let client = try RawClient(port: server.port, receiveTimeout: 5)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try client.readHead()
            XCTAssertEqual(head.header("Transfer-Encoding")?.lowercased(), "chunked")
            let (data, ended) = try decodeChunkedPrefix(client.readToEnd())
            XCTAssertEqual(data.count, body.count, "round \(round): every byte written before the abort must arrive")
            XCTAssertTrue(data == body, "round \(round): the bytes must arrive unchanged and in order")
            XCTAssertFalse(ended, "round \(round): an aborted stream must not send the last chunk")
        }
    }

    /// Draining an aborted stream never waits on a client that does not read: a client that
    /// leaves (closes its socket with bytes unread, so its system resets the connection), or a
    /// server that stops, ends the connection with bytes still queued.
    func testAbortedStreamWithAClientThatDoesNotReadEndsWhenTheClientLeavesOrTheServerStops() throws {
        for ending in ["client leaves", "server stops"] {
            let aborted = DispatchSemaphore(value: 0)
            let queuedAtAbort = Box(0)
            let server = try startServer { _, _, writer in
                let stream = writer.startStream(status: 200, headers: [("Content-Length", "\(8 << 20)")])
                onAnotherThread {
                    stream.write([UInt8](repeating: 0x61, count: 4 << 20))
                    stream.abort()
                    queuedAtAbort.value = stream.bufferedBytes
                    aborted.signal()
                }
            }
            var client: RawClient? = try RawClient(port: server.port, receiveTimeout: 5, receiveBuffer: 4096)
            try client?.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertEqual(aborted.wait(timeout: .now() + 5), .success, ending)
            XCTAssertGreaterThan(queuedAtAbort.value, 0, "\(ending): the abort must come with bytes still queued")
            if ending == "client leaves" {
                client = nil  // closes the socket
                XCTAssertTrue(server.waitUntilIdle(deadline: .now() + 5), "the connection outlived its client")
            } else {
                let stopped = DispatchSemaphore(value: 0)
                onAnotherThread {
                    server.stop()
                    stopped.signal()
                }
                XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success, "stop() waited on a client that does not read")
                XCTAssertLessThan(try client?.readToEnd().count ?? 0, 4 << 20, "the queued bytes cannot all have been sent")
            }
        }
    }

    /// Bytes 0, 1, …, 250, 0, 1, …: a body whose every offset is checkable (251 is prime, so no
    /// 16 KiB block repeats the one before it).
    private static func patternBody(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8($0 % 251) }
    }
}
