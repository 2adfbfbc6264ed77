import Foundation
import HTTPServer
import TestWaiting
import XCTest

final class HTTPServerResponseTests: XCTestCase {
    func testSimpleResponseCarriesStatusHeadersAndBody() throws {
        let server = try startServer { head, _, writer in
            writer.respond(status: 200, headers: [("Content-Type", "text/plain"), ("X-Method", head.method)],
                           body: Array("hello".utf8))
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "hello")
        XCTAssertEqual(response.header("Content-Type"), "text/plain")
        XCTAssertEqual(response.header("X-Method"), "GET")
        XCTAssertEqual(response.header("Content-Length"), "5")
    }

    func testHeadExposesRawTargetPathQueryHeadersAndAddress() throws {
        let seen = Box<HTTPRequestHead?>(nil)
        let server = try startServer { head, _, writer in
            seen.value = head
            writer.respond(status: 204)
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange(
            "GET /p/a%2Fb/../c?key=c1&KEY=c2&k%65y=c3&key= HTTP/1.1\r\nHost: x\r\nX-One: 1\r\nx-one: 2\r\n\r\n")
        XCTAssertEqual(response.status, 204)
        let head = try XCTUnwrap(seen.value)
        XCTAssertEqual(head.target, "/p/a%2Fb/../c?key=c1&KEY=c2&k%65y=c3&key=")
        XCTAssertEqual(head.path, "/p/a%2Fb/../c")
        XCTAssertEqual(head.query, "key=c1&KEY=c2&k%65y=c3&key=")
        XCTAssertEqual(head.header("x-ONE"), "1")
        XCTAssertEqual(head.headers(named: "X-One"), ["1", "2"])
        XCTAssertEqual(head.remoteAddress, "127.0.0.1")
        XCTAssertEqual(head.version, .http11)
        XCTAssertEqual(head.bodyFraming, .none)
        XCTAssertFalse(head.hasBody)
    }

    func testBodyIsEchoedForContentLengthAndChunkedRequests() throws {
        let server = try startServer { _, body, writer in
            writer.respond(status: 200, body: body)
        }
        let client = try RawClient(port: server.port)
        let fixed = try client.exchange("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world")
        XCTAssertEqual(fixed.text, "hello world")
        let chunked = try client.exchange(
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        XCTAssertEqual(chunked.text, "hello world")
    }

    func testGetWithBodyIsLeftToTheHandler() throws {
        let seen = Box<(Bool, [UInt8])?>(nil)
        let server = try startServer { head, body, writer in
            seen.value = (head.hasBody, body)
            writer.respond(status: 200)
        }
        let client = try RawClient(port: server.port)
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc").status, 200)
        XCTAssertEqual(seen.value?.0, true)
        XCTAssertEqual(seen.value?.1, Array("abc".utf8))
        XCTAssertEqual(try client.exchange("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").status, 200)
        XCTAssertEqual(seen.value?.0, false)
    }

    func testLateResponseFromAnotherThreadThenKeepAlive() throws {
        let server = try startServer { head, _, writer in
            onAnotherThread {
                Thread.sleep(forTimeInterval: 0.2)  // a late answer: the delay is the behaviour under test
                writer.respond(status: 201, body: Array("late \(head.path)".utf8))
            }
        }
        let client = try RawClient(port: server.port)
        let started = Date()
        let first = try client.exchange("GET /one HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(first.status, 201)
        XCTAssertEqual(first.text, "late /one")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.2)
        let second = try client.exchange("GET /two HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(second.text, "late /two")
    }

    func testPipelinedRequestsAreAnsweredInOrderEvenWhenTheFirstIsLate() throws {
        let server = try startServer { head, _, writer in
            if head.path == "/slow" {
                onAnotherThread {
                    Thread.sleep(forTimeInterval: 0.2)  // a late first answer: the behaviour under test
                    writer.respond(status: 200, body: Array("slow".utf8))
                }
            } else {
                writer.respond(status: 200, body: Array("fast".utf8))
            }
        }
        let client = try RawClient(port: server.port)
        try client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readResponse().text, "slow")
        XCTAssertEqual(try client.readResponse().text, "fast")
    }

    func testOnlyTheFirstAnswerCounts() throws {
        let server = try startServer { _, _, writer in
            writer.respond(status: 200, body: Array("first".utf8))
            writer.respond(status: 500, body: Array("second".utf8))
            XCTAssertFalse(writer.isPending)
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "first")
    }

    func testWriterReleasedWithoutAnswerSends500() throws {
        let server = try startServer { _, _, _ in }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(response.status, 500)
        XCTAssertEqual(response.text, #"{"error":"internal_error"}"#)
    }

    func testHeaderWithLineBreakBecomes500() throws {
        let server = try startServer { _, _, writer in
            writer.respond(status: 200, headers: [("X-Evil", "a\r\nSet-Cookie: b")], body: [])
        }
        let client = try RawClient(port: server.port)
        let response = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(response.status, 500)
        XCTAssertNil(response.header("Set-Cookie"))
    }

    func testConcurrentClientsAllGetTheirOwnAnswers() throws {
        let server = try startServer { head, body, writer in
            writer.respond(status: 200, body: Array(head.path.utf8) + body)
        }
        let failures = Box(0)
        let group = DispatchGroup()
        for clientIndex in 0..<16 {
            group.enter()
            onAnotherThread {
                defer { group.leave() }
                do {
                    let client = try RawClient(port: server.port)
                    for requestIndex in 0..<25 {
                        let path = "/c\(clientIndex)/r\(requestIndex)"
                        let response = try client.exchange(
                            "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
                        if response.status != 200 || response.text != path + "ok" { failures.mutate { $0 += 1 } }
                    }
                } catch {
                    failures.mutate { $0 += 1 }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(failures.value, 0)
    }

    func testInvalidHostFailsToStart() {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "localhost"), bodyLimit: { _ in 0 }) { _, _, w in
            w.respond(status: 200)
        }
        XCTAssertThrowsError(try server.start()) { error in
            XCTAssertEqual((error as? HTTPServerError)?.reason, "invalid_host")
        }
    }
}
