import Foundation
import TestWaiting
import XCTest
@testable import Upstream

/// Transfers beyond the per-host limit wait for a connection; the wait counts toward the connect timeout.
final class QueueingTests: XCTestCase {
    func testTransferQueuedBehindTheHostLimitWaitsThenRuns() throws {
        let server = try TestUpstreamServer { request, conn in
            if request.target == "/slow" { Thread.sleep(forTimeInterval: 0.3) }  // a slow upstream: the behaviour under test
            conn.respond(status: 200, body: Array(request.target.utf8))
        }
        defer { server.stop() }
        let client = UpstreamClient(maxConnectionsPerHost: 1)
        defer { client.shutdown() }

        let slow = RecordingHandler()
        let queued = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/slow"), handler: slow)
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/next"), handler: queued)
        XCTAssertTrue(queued.waitForCompletion())
        XCTAssertTrue(slow.waitForCompletion())

        XCTAssertEqual(queued.snapshot.body, Array("/next".utf8))
        let slowDone = try XCTUnwrap(slow.snapshot.completedAt)
        XCTAssertLessThanOrEqual(slowDone, try XCTUnwrap(queued.snapshot.completedAt))
        XCTAssertEqual(server.connectionCount, 1)
    }

    func testQueueWaitLongerThanTheConnectTimeoutIsConnect() throws {
        let server = try TestUpstreamServer { request, conn in
            Thread.sleep(forTimeInterval: 0.8)  // holds the one connection: the behaviour under test
            conn.respond(status: 200)
        }
        defer { server.stop() }
        let client = UpstreamClient(maxConnectionsPerHost: 1)
        defer { client.shutdown() }

        let holder = RecordingHandler()
        let queued = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/hold"), handler: holder)
        XCTAssertTrue(waitUntil(timeout: 3) { !server.requests.isEmpty }, "the holder never reached the upstream")
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/q", connectTimeoutMs: 200), handler: queued)
        XCTAssertTrue(queued.waitForCompletion(timeout: 3))
        XCTAssertTrue(holder.waitForCompletion(timeout: 3))

        XCTAssertEqual(queued.snapshot.error, .connect)
        XCTAssertNil(holder.snapshot.error)
    }
}

extension QueueingTests {
    func testHostLimitIsPerHostAndPort() throws {
        let holding = try TestUpstreamServer { _, conn in _ = conn.waitForPeerClose(timeout: 5) }
        defer { holding.stop() }
        let other = try TestUpstreamServer { _, conn in conn.respond(status: 200) }
        defer { other.stop() }
        let client = UpstreamClient(maxConnectionsPerHost: 1)
        defer { client.shutdown() }

        let held = RecordingHandler()
        let transfer = client.start(UpstreamRequest(url: "http://127.0.0.1:\(holding.port)/"), handler: held)
        XCTAssertTrue(waitUntil(timeout: 3) { !holding.requests.isEmpty }, "the held request never reached the upstream")
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(other.port)/", connectTimeoutMs: 1000), handler: handler)
        XCTAssertTrue(handler.waitForCompletion(timeout: 3))
        transfer.cancel()

        XCTAssertEqual(handler.snapshot.status, 200)
        XCTAssertNil(handler.snapshot.error)
    }
}
