import Dispatch
import TestWaiting
import XCTest
@testable import Upstream

/// Status, headers and body reach the handler as the upstream sends them, as they arrive.
final class ResponseStreamingTests: XCTestCase {
    private var client: UpstreamClient!
    private var servers: [TestUpstreamServer] = []

    override func setUp() { client = UpstreamClient() }

    override func tearDown() {
        client.shutdown()
        servers.forEach { $0.stop() }
    }

    private func serve(_ handler: @escaping TestUpstreamServer.Handler) throws -> TestUpstreamServer {
        let server = try TestUpstreamServer(handler: handler)
        servers.append(server)
        return server
    }

    func testStatusHeadersAndBodyAreDeliveredOnceInOrder() throws {
        let server = try serve { _, connection in
            connection.write(
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Request-Id: abc\r\n"
                    + "Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 11\r\n\r\n{\"id\":\"7\"}\n")
        }
        let handler = RecordingHandler()
        let client = self.client!
        handler.threadProbe = { client.isOnClientThread }
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/v1/things"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())

        let record = handler.snapshot
        XCTAssertEqual(record.status, 201)
        XCTAssertEqual(record.headCalls, 1)
        XCTAssertEqual(record.headers.lines, [
            "Content-Type: application/json", "X-Request-Id: abc", "Set-Cookie: a=1", "Set-Cookie: b=2",
            "Content-Length: 11",
        ])
        XCTAssertEqual(record.body, Array("{\"id\":\"7\"}\n".utf8))
        XCTAssertNil(record.error)
        XCTAssertEqual(record.afterHead, true)
        XCTAssertEqual(record.completions, 1)
        XCTAssertEqual(record.callsOnClientThread, [true, true, true])  // head, body, completion
    }

    func testInterimResponsesAreSkippedAndFoldedLinesJoined() throws {
        let server = try serve { _, connection in
            connection.write(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nX-Folded: first\r\n  second\r\n\tthird\r\nX-Plain:  padded  \r\n"
                    + "Content-Length: 2\r\n\r\nok")
        }
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())

        let record = handler.snapshot
        XCTAssertEqual(record.status, 200)
        XCTAssertEqual(record.headCalls, 1)
        XCTAssertEqual(record.headers.lines, ["X-Folded: first second third", "X-Plain: padded", "Content-Length: 2"])
        XCTAssertEqual(record.body, Array("ok".utf8))
    }

    func testChunkedResponseDeliversEachChunkBeforeTheNextIsSent() throws {
        let firstChunkSeen = DispatchSemaphore(value: 0)
        let serverWaited = DispatchSemaphore(value: 0)
        let server = try serve { _, connection in
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            connection.writeChunk(Array("data: 1\n\n".utf8))
            // Chunk 2 is written only once the client has delivered chunk 1 (or after 5 s, failing the test).
            if firstChunkSeen.wait(timeout: .now() + 5) == .success { serverWaited.signal() }
            connection.writeChunk(Array("data: 2\n\n".utf8))
            connection.write("0\r\n\r\n")
        }
        let handler = RecordingHandler(onChunk: { total in
            if total == 9 { firstChunkSeen.signal() }
        })
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/stream"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())

        XCTAssertEqual(serverWaited.wait(timeout: .now()), .success, "chunk 1 was not delivered before chunk 2 was sent")
        let record = handler.snapshot
        XCTAssertEqual(record.body, Array("data: 1\n\ndata: 2\n\n".utf8))
        XCTAssertEqual(record.chunkTimes.count, 2)
        XCTAssertNil(record.error)
    }

    func testHeadResponseHasNoBodyEvenWithContentLength() throws {
        let server = try serve { _, connection in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n")
        }
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/", method: "HEAD"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())

        XCTAssertEqual(server.requests.first?.method, "HEAD")
        XCTAssertEqual(handler.snapshot.status, 200)
        XCTAssertEqual(handler.snapshot.body, [])
        XCTAssertNil(handler.snapshot.error)
    }

    func testCompressedBodyPassesThroughUndecoded() throws {
        let gzipBytes: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        let server = try serve { _, connection in
            connection.respond(status: 200, headers: [("Content-Encoding", "gzip")], body: gzipBytes)
        }
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())

        XCTAssertEqual(handler.snapshot.body, gzipBytes)
        XCTAssertFalse(server.requests.first?.headers.contains { $0.0.lowercased() == "accept-encoding" } ?? true)
    }

    func testRedirectIsReturnedAsIsAndItsLocationNotFetched() throws {
        let elsewhere = try serve { _, connection in connection.respond(status: 200) }
        let server = try serve { _, connection in
            connection.respond(status: 302, reason: "Found", headers: [("Location", "http://127.0.0.1:\(elsewhere.port)/stolen")])
        }
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/start"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())
        // A client that followed the redirect would connect to `elsewhere` about now.
        XCTAssertTrue(staysFalse(for: 0.2) { elsewhere.connectionCount > 0 })

        XCTAssertEqual(handler.snapshot.status, 302)
        XCTAssertEqual(handler.snapshot.headers.first?.1, "http://127.0.0.1:\(elsewhere.port)/stolen")
        XCTAssertNil(handler.snapshot.error)
        XCTAssertEqual(elsewhere.connectionCount, 0)
    }

    func testMalformedStatusLineIsAProtocolError() throws {
        let server = try serve { _, connection in
            connection.write("HTTP/1.1 2x0 Nope\r\nContent-Length: 0\r\n\r\n")
            connection.close()
        }
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())

        XCTAssertEqual(handler.snapshot.error?.reason, "upstream_protocol")
        XCTAssertEqual(handler.snapshot.afterHead, false)
    }

    func testConnectionCutMidBodyIsAProtocolErrorAfterHead() throws {
        let server = try serve { _, connection in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
            connection.close()
        }
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion())

        XCTAssertEqual(handler.snapshot.body, Array("partial".utf8))
        XCTAssertEqual(handler.snapshot.error?.reason, "upstream_protocol")
        XCTAssertEqual(handler.snapshot.afterHead, true)
    }
}
