import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Upstream

/// Many transfers share the multi handle; connections are reused and capped per host.
final class ConnectionPoolTests: XCTestCase {
    private func echoPathServer() throws -> TestUpstreamServer {
        try TestUpstreamServer { request, conn in
            conn.respond(status: 200, headers: [("Content-Type", "text/plain")], body: Array(request.target.utf8))
        }
    }

    func testSequentialRequestsReuseOneConnection() throws {
        let server = try echoPathServer()
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        for index in 0..<20 {
            let handler = RecordingHandler()
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/r\(index)"), handler: handler)
            XCTAssertTrue(handler.waitForCompletion())
            XCTAssertEqual(handler.snapshot.body, Array("/r\(index)".utf8))
        }
        XCTAssertEqual(server.requests.count, 20)
        XCTAssertEqual(server.connectionCount, 1)
    }

    func testManyConcurrentTransfersAllCompleteWithinThePerHostLimit() throws {
        let server = try TestUpstreamServer { request, conn in
            Thread.sleep(forTimeInterval: 0.01)  // hold each connection a moment so transfers overlap
            conn.respond(status: 200, body: Array(request.target.utf8))
        }
        defer { server.stop() }
        let client = UpstreamClient(maxConnectionsPerHost: 8)
        defer { client.shutdown() }

        let count = 300
        let handlers = (0..<count).map { _ in RecordingHandler() }
        DispatchQueue.concurrentPerform(iterations: count) { index in
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/item/\(index)"), handler: handlers[index])
        }
        for (index, handler) in handlers.enumerated() {
            XCTAssertTrue(handler.waitForCompletion(timeout: 30))
            XCTAssertNil(handler.snapshot.error)
            XCTAssertEqual(handler.snapshot.status, 200)
            XCTAssertEqual(handler.snapshot.body, Array("/item/\(index)".utf8))
        }
        XCTAssertEqual(server.requests.count, count)
        XCTAssertLessThanOrEqual(server.connectionCount, 8)
        XCTAssertLessThan(server.connectionCount, count)
    }
}

extension ConnectionPoolTests {
    /// libcurl's own cache limit (four times the transfers in progress) falls as a burst ends and
    /// closes the warm connections; the client's fixed cache keeps them for the next burst.
    func testConnectionsWarmedByABurstServeTheNextBurst() throws {
        let server = try TestUpstreamServer { request, conn in
            Thread.sleep(forTimeInterval: 0.05)  // hold each connection so the burst needs all of them
            conn.respond(status: 200, body: Array(request.target.utf8))
        }
        defer { server.stop() }
        let client = UpstreamClient(maxConnectionsPerHost: 16)
        defer { client.shutdown() }

        for burst in 0..<3 {
            let handlers = (0..<16).map { _ in RecordingHandler() }
            for (index, handler) in handlers.enumerated() {
                client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/b\(burst)/\(index)"), handler: handler)
            }
            for (index, handler) in handlers.enumerated() {
                XCTAssertTrue(handler.waitForCompletion(timeout: 30))
                XCTAssertEqual(handler.snapshot.body, Array("/b\(burst)/\(index)".utf8))
            }
        }
        XCTAssertEqual(server.requests.count, 48)
        XCTAssertEqual(server.connectionCount, 16)
    }
}
