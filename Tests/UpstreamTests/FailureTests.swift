import Dispatch
import Foundation
import TestWaiting
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Upstream

/// Connect failures and silent upstreams end with the right error, at the right time.
final class FailureTests: XCTestCase {
    private var client: UpstreamClient!

    override func setUp() { client = UpstreamClient() }
    override func tearDown() { client.shutdown() }

    /// A port on 127.0.0.1 that nothing listens on (bound, then released).
    private func closedPort() throws -> UInt16 {
        let server = try TestUpstreamServer { _, _ in }
        let port = server.port
        server.stop()
        return port
    }

    func testConnectionRefusedIsConnectBeforeHead() throws {
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(try closedPort())/"), handler: handler)
        XCTAssertTrue(handler.waitForCompletion(timeout: 5))

        XCTAssertEqual(handler.snapshot.error, .connect)
        XCTAssertEqual(handler.snapshot.error?.reason, "upstream_connect")
        XCTAssertEqual(handler.snapshot.afterHead, false)
        XCTAssertNil(handler.snapshot.status)
    }

    func testUnresolvableHostIsConnect() throws {
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://keyward-no-such-host.invalid/", connectTimeoutMs: 3000), handler: handler)
        XCTAssertTrue(handler.waitForCompletion(timeout: 5))
        XCTAssertEqual(handler.snapshot.error, .connect)
    }

    func testConnectTimeoutIsConnectWithinTheWindow() throws {
        // A listener with a full accept queue: Linux drops further SYNs, so the connect hangs.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(fd, $0, length)
                _ = listen(fd, 0)
                _ = getsockname(fd, $0, &length)
            }
        }
        var fillers: [Int32] = []
        defer { fillers.forEach { _ = close($0) } }
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
            }
            fillers.append(filler)
        }
        // The first filler's handshake completes into the one-slot accept queue; the others'
        // SYNs are dropped. Wait for that one, so the queue is surely full.
        XCTAssertTrue(waitUntil(timeout: 2) { fillers.contains { Self.isConnected($0) } }, "no filler connected")

        let started = Date()
        let handler = RecordingHandler()
        let port = UInt16(bigEndian: address.sin_port)
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(port)/", connectTimeoutMs: 300, idleTimeoutMs: 100), handler: handler)
        XCTAssertTrue(handler.waitForCompletion(timeout: 5))
        let elapsed = Date().timeIntervalSince(started)

        XCTAssertEqual(handler.snapshot.error, .connect)
        XCTAssertGreaterThanOrEqual(elapsed, 0.28)
        XCTAssertLessThan(elapsed, 1.0)
    }

    func testSilentUpstreamTimesOutWithinTheIdleWindowBeforeHead() throws {
        let server = try TestUpstreamServer { _, conn in _ = conn.waitForPeerClose(timeout: 5) }
        defer { server.stop() }
        let started = Date()
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/", idleTimeoutMs: 300), handler: handler)
        XCTAssertTrue(handler.waitForCompletion(timeout: 5))
        let elapsed = Date().timeIntervalSince(started)  // upper bound leaves room for a loaded 2-core CI box

        XCTAssertEqual(handler.snapshot.error, .timeout)
        XCTAssertEqual(handler.snapshot.error?.reason, "upstream_timeout")
        XCTAssertEqual(handler.snapshot.afterHead, false)
        XCTAssertGreaterThanOrEqual(elapsed, 0.3)
        XCTAssertLessThan(elapsed, 0.8)
    }

    func testUpstreamFallingSilentMidStreamTimesOutAfterHead() throws {
        let server = try TestUpstreamServer { _, conn in
            conn.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in 0..<3 {
                conn.writeChunk(Array("tick\n".utf8))
                Thread.sleep(forTimeInterval: 0.1)  // each gap is well inside the 400 ms window
            }
            _ = conn.waitForPeerClose(timeout: 5)
        }
        defer { server.stop() }
        let handler = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/", idleTimeoutMs: 400), handler: handler)
        XCTAssertTrue(handler.waitForCompletion(timeout: 5))

        let record = handler.snapshot
        XCTAssertEqual(record.error, .timeout)
        XCTAssertEqual(record.afterHead, true)
        XCTAssertEqual(record.body, Array("tick\ntick\ntick\n".utf8))
        let silence = try XCTUnwrap(record.completedAt).timeIntervalSince(try XCTUnwrap(record.chunkTimes.last))
        XCTAssertGreaterThanOrEqual(silence, 0.39)
        XCTAssertLessThan(silence, 0.9)
    }

    /// True when the non-blocking `socket`'s connect has completed (it polls writable, no error).
    private static func isConnected(_ socket: Int32) -> Bool {
        var entry = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        guard poll(&entry, 1, 0) == 1, entry.revents & Int16(POLLOUT) != 0 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
    }
}
