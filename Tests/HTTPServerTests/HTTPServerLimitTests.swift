import Foundation
import HTTPServer
import XCTest

/// Connection bounds enforced by libmicrohttpd under our configuration.
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

    func testPendingAnswerDoesNotTimeOut() throws {
        var configuration = HTTPServerConfiguration(threads: 1)
        configuration.connectionTimeoutSeconds = 1
        let server = try startServer(configuration: configuration) { _, _, writer in
            onAnotherThread {
                Thread.sleep(forTimeInterval: 2.2)
                writer.respond(status: 200, body: Array("slow".utf8))
            }
        }
        let client = try RawClient(port: server.port, receiveTimeout: 5)
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").text, "slow")
    }
}
