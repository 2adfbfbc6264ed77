import Foundation
import HTTPServer
import TestWaiting
import XCTest

/// Clients leaving while their connection waits on the application (nothing is being read or sent).
final class HTTPServerDepartureTests: XCTestCase {
    func testIdleStreamSeesClientLeaveWithinASecondWithoutWriting() throws {
        let closed = DispatchSemaphore(value: 0)
        let closedAt = Box<Date?>(nil)
        let keep = Box<ResponseStream?>(nil)
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream")])
            stream.onClose = {
                closedAt.value = Date()
                closed.signal()
            }
            stream.write(Array("data: 1\n\n".utf8))   // then silence: an upstream still thinking
            keep.value = stream
        }
        let client = try RawClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readHead().status, 200)
        XCTAssertNotNil(try client.readChunk())
        XCTAssertTrue(waitUntil(timeout: 2) { server.suspendedRequests == 1 }, "the connection never went to sleep on its empty buffer")
        let leftAt = Date()
        client.closeNow()
        XCTAssertEqual(closed.wait(timeout: .now() + 3), .success, "onClose never fired")
        XCTAssertLessThan(try XCTUnwrap(closedAt.value).timeIntervalSince(leftAt), 1.0)
        XCTAssertFalse(try XCTUnwrap(keep.value).write([1]))
    }

    func testPendingAnswerSeesClientLeaveWithinASecond() throws {
        let closed = DispatchSemaphore(value: 0)
        let closedAt = Box<Date?>(nil)
        let keep = Box<ResponseWriter?>(nil)
        let server = try startServer { _, _, writer in
            writer.onClose = {
                closedAt.value = Date()
                closed.signal()
            }
            keep.value = writer   // the answer never comes: an upstream call in flight
        }
        let client = try RawClient(port: server.port)
        try client.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
        XCTAssertTrue(waitUntil(timeout: 2) { keep.value != nil && server.suspendedRequests == 1 }, "the request never went to sleep")
        let leftAt = Date()
        client.closeNow()
        XCTAssertEqual(closed.wait(timeout: .now() + 3), .success, "onClose never fired")
        XCTAssertLessThan(try XCTUnwrap(closedAt.value).timeIntervalSince(leftAt), 1.0)
        let writer = try XCTUnwrap(keep.value)
        XCTAssertFalse(writer.isPending)
        writer.respond(status: 200)   // too late: ignored, no crash
    }

    func testDeliveredResponseDoesNotFireOnClose() throws {
        let fired = Box(false)
        let server = try startServer { _, _, writer in
            writer.onClose = { fired.value = true }
            let stream = writer.startStream(status: 200)
            stream.write(Array("done".utf8))
            stream.finish()
        }
        let client = try RawClient(port: server.port)
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").text, "done")
        client.closeNow()
        // Longer than one departure check (250 ms): a check that wrongly fired would have by then.
        XCTAssertTrue(staysFalse(for: 0.4) { fired.value })
        XCTAssertFalse(fired.value)
    }
}
