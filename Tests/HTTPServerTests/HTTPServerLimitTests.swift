import Foundation
import HTTPServer
import TestWaiting
import XCTest

/// Connection bounds the server enforces from its configuration.
final class HTTPServerLimitTests: XCTestCase {
    func testPerIPConnectionLimitClosesTheExtraConnection() throws {
        var configuration = HTTPServerConfiguration(threads: 2)
        configuration.perIPConnectionLimit = 2
        let server = try startServer(configuration: configuration) { _, _, writer in writer.respond(status: 200) }
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        XCTAssertEqual(try first.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
        XCTAssertEqual(try second.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
        let third = try RawClient(port: server.port, receiveTimeout: 2)
        try? third.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(third.isClosedByServer(), "a third connection from one IP was served")
        // The first two stay usable.
        XCTAssertEqual(try first.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
    }

    func testIdleConnectionIsClosedAfterTheTimeout() throws {
        var configuration = HTTPServerConfiguration(threads: 1)
        configuration.connectionTimeoutSeconds = 1
        let server = try startServer(configuration: configuration) { _, _, writer in writer.respond(status: 200) }
        let client = try RawClient(port: server.port, receiveTimeout: 4)
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
        let idleFrom = Date()
        XCTAssertTrue(client.isClosedByServer())
        let idle = Date().timeIntervalSince(idleFrom)
        XCTAssertGreaterThanOrEqual(idle, 0.5)
        XCTAssertLessThan(idle, 3.5)
    }

    func testAHeadTrickledAByteAtATimeIsCutAtTheTimeoutFromItsFirstByte() throws {
        var configuration = HTTPServerConfiguration(threads: 1)
        configuration.connectionTimeoutSeconds = 1
        let calls = Box(0)
        let server = try startServer(configuration: configuration) { _, _, writer in
            calls.mutate { $0 += 1 }
            writer.respond(status: 200)
        }
        let client = Box(try RawClient(port: server.port, receiveTimeout: 5))
        let head = Array(("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "s", count: 200) + "\r\n\r\n").utf8)
        let stop = Box(false)
        let started = Date()
        onAnotherThread {
            // A slowloris: one byte every 50 ms, never silent for as long as the timeout.
            for byte in head where !stop.value {
                if (try? client.value.send([byte])) == nil { break }
                Thread.sleep(forTimeInterval: 0.05)  // the trickle's pace: the behaviour under test
            }
        }
        XCTAssertTrue(client.value.waitForClose(), "a trickled head was not cut")
        let took = Date().timeIntervalSince(started)
        stop.value = true
        XCTAssertGreaterThanOrEqual(took, 0.9, "cut before the head timeout")
        XCTAssertLessThan(took, 3.0, "cut long after the 1 s head timeout, or only when the head completed")
        XCTAssertEqual(calls.value, 0)
    }

    func testPendingAnswerDoesNotTimeOut() throws {
        var configuration = HTTPServerConfiguration(threads: 1)
        configuration.connectionTimeoutSeconds = 1
        let server = try startServer(configuration: configuration) { _, _, writer in
            onAnotherThread {
                Thread.sleep(forTimeInterval: 2.2)  // an answer slower than the idle timeout: the behaviour under test
                writer.respond(status: 200, body: Array("slow".utf8))
            }
        }
        let client = try RawClient(port: server.port, receiveTimeout: 5)
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").text, "slow")
    }

    func testConnectionOverTheLimitWaitsUntilASlotFrees() throws {
        var configuration = HTTPServerConfiguration(threads: 1)   // the limit is split among the threads
        configuration.connectionLimit = 2
        let server = try startServer(configuration: configuration) { _, _, writer in writer.respond(status: 200) }
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        XCTAssertEqual(try first.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
        XCTAssertEqual(try second.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
        // At the limit the server stops accepting: the third waits in the listen backlog.
        let third = try RawClient(port: server.port, receiveTimeout: 0.5)
        try third.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertThrowsError(try third.readHead(), "a connection over the limit was served at once")
        XCTAssertEqual(server.openConnections, 2)
        XCTAssertEqual(server.connectionLimitReachedCount, 1)
        first.closeNow()
        let thirdAgain = try RawClient(port: server.port, receiveTimeout: 3)
        try thirdAgain.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        // One of the two waiting connections now gets the freed slot.
        let served = (try? third.readHead().status) ?? (try? thirdAgain.readHead().status)
        XCTAssertEqual(served, 200)
    }

    func testListensOnIPv6Loopback() throws {
        let seen = Box<String?>(nil)
        let server = try startServer(configuration: HTTPServerConfiguration(host: "::1", threads: 1)) { head, _, writer in
            seen.value = head.remoteAddress
            writer.respond(status: 200)
        }
        let client = try RawClient(port: server.port, ipv6: true)
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status, 200)
        XCTAssertEqual(seen.value, "::1")
    }
}
