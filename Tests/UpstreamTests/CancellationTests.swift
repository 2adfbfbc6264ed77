import Dispatch
import Foundation
import Synchronization
import TestWaiting
import XCTest
@testable import Upstream
import KeywardSupport

/// `cancel()` from any thread ends the transfer at once and closes the upstream connection.
final class CancellationTests: XCTestCase {
    func testCancelMidStreamClosesTheUpstreamSocketWithinASecond() throws {
        let closedAfter = Locked<TimeInterval?>(nil)
        let cancelledAt = Locked<Date?>(nil)
        let server = try TestUpstreamServer { _, conn in
            conn.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            conn.writeChunk(Array("data: 1\n\n".utf8))
            let sawClose = conn.waitForPeerClose(timeout: 5)
            let cancelTime = cancelledAt.withLock { $0 } ?? Date()
            closedAfter.withLock { $0 = sawClose ? Date().timeIntervalSince(cancelTime) : nil }
            conn.close()
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        let firstChunk = DispatchSemaphore(value: 0)
        let handler = RecordingHandler(onChunk: { _ in firstChunk.signal() })
        let transfer = client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/sse"), handler: handler)
        XCTAssertEqual(firstChunk.wait(timeout: .now() + 5), .success)

        cancelledAt.withLock { $0 = Date() }
        transfer.cancel()  // from the test thread, not the client's
        XCTAssertTrue(handler.waitForCompletion(timeout: 1))
        // The upstream thread records when it saw the close; wait for that, not for a while.
        XCTAssertTrue(waitUntil(timeout: 5) { closedAfter.withLock { $0 } != nil }, "the upstream never saw the connection close")

        let record = handler.snapshot
        XCTAssertEqual(record.error, .cancelled)
        XCTAssertEqual(record.error?.reason, "upstream_cancelled")
        XCTAssertEqual(record.afterHead, true)
        XCTAssertEqual(record.completions, 1)
        let seconds = try XCTUnwrap(closedAfter.withLock { $0 }, "the upstream never saw the connection close")
        XCTAssertLessThan(seconds, 1.0)
        print("cancel: upstream saw the close \(Int(seconds * 1000)) ms after cancel()")
    }

    func testCancelWhilePausedCompletesAsCancelled() throws {
        let server = try TestUpstreamServer { _, conn in
            conn.write("HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n")
            while conn.write([UInt8](repeating: 7, count: 65536)) {}
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        let paused = DispatchSemaphore(value: 0)
        let handler = RecordingHandler(keepBody: false, bodyDecision: { _, _ in
            paused.signal()
            return false
        })
        let transfer = client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        XCTAssertEqual(paused.wait(timeout: .now() + 5), .success)
        // The loop pauses the transfer as the callback returns false, before it reads its inbox
        // again, so this cancel always meets a paused transfer.
        transfer.cancel()
        transfer.cancel()  // idempotent

        XCTAssertTrue(handler.waitForCompletion(timeout: 1))
        XCTAssertEqual(handler.snapshot.error, .cancelled)
        XCTAssertEqual(handler.snapshot.completions, 1)
    }

    func testCancelFromInsideTheHeadCallbackEndsBeforeAnyBody() throws {
        let server = try TestUpstreamServer { _, conn in
            conn.respond(status: 200, body: Array("never seen".utf8))
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        final class CancellingHandler: UpstreamResponseHandler, @unchecked Sendable {
            var transfer: UpstreamTransfer?
            let recorder = RecordingHandler()
            let ready = DispatchSemaphore(value: 0)
            func upstreamHead(status: Int, headers: [(String, String)]) {
                ready.wait()
                transfer?.cancel()
                recorder.upstreamHead(status: status, headers: headers)
            }
            func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool { recorder.upstreamBody(chunk) }
            func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) { recorder.upstreamComplete(error, afterHead: afterHead) }
        }
        let handler = CancellingHandler()
        handler.transfer = client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        handler.ready.signal()

        XCTAssertTrue(handler.recorder.waitForCompletion())
        XCTAssertEqual(handler.recorder.snapshot.error, .cancelled)
        XCTAssertEqual(handler.recorder.snapshot.body, [])
    }

    func testShutdownCompletesRunningTransfersAsCancelled() throws {
        let server = try TestUpstreamServer { _, conn in _ = conn.waitForPeerClose(timeout: 5) }
        defer { server.stop() }
        let client = UpstreamClient()

        let handlers = (0..<3).map { _ in RecordingHandler() }
        for handler in handlers {
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        }
        XCTAssertTrue(waitUntil(timeout: 3) { server.requests.count == 3 }, "the transfers never reached the upstream")
        client.shutdown()

        for handler in handlers {
            XCTAssertTrue(handler.waitForCompletion(timeout: 1))
            XCTAssertEqual(handler.snapshot.error, .cancelled)
        }
        let late = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: late)
        XCTAssertTrue(late.waitForCompletion(timeout: 1))
        XCTAssertEqual(late.snapshot.error, .cancelled)
    }
}
