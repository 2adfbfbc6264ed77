import Foundation
import HTTPServer
import TestWaiting
import XCTest

final class HTTPServerDrainTests: XCTestCase {
    func testDrainLetsAStreamInProgressFinishAndAcceptsNoNewConnection() throws {
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200)
            stream.write(Array("a".utf8))
            onAnotherThread {
                Thread.sleep(forTimeInterval: 0.3)  // a stream still producing when the drain begins: the behaviour under test
                stream.write(Array("b".utf8))
                stream.finish()
            }
        }
        let client = try RawClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readHead().status, 200)
        XCTAssertEqual(try client.readChunk(), Array("a".utf8))
        XCTAssertEqual(server.activeRequests, 1)

        let drained = DispatchSemaphore(value: 0)
        let started = Date()
        // Stop accepting here, so the late connection below surely comes after it; the drain
        // quiesces again, which changes nothing.
        XCTAssertTrue(server.quiesce())
        onAnotherThread {
            server.drain(gracePeriodMilliseconds: 5000)
            drained.signal()
        }
        let late = try? RawClient(port: server.port, receiveTimeout: 0.2)
        try? late?.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertNil(try? late?.readHead(), "a connection made while draining was served")

        XCTAssertEqual(try client.readChunk(), Array("b".utf8))
        XCTAssertNil(try client.readChunk())
        XCTAssertEqual(drained.wait(timeout: .now() + 3), .success)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.0, "drain waited past the last request")
        XCTAssertEqual(server.port, 0)
    }

    func testDrainCutsWhatIsLeftAfterTheGracePeriod() throws {
        let closed = DispatchSemaphore(value: 0)
        let keep = Box<ResponseStream?>(nil)
        let server = try startServer { _, _, writer in
            let stream = writer.startStream(status: 200)
            stream.onClose = { closed.signal() }
            stream.write(Array("a".utf8))
            keep.value = stream   // never finished
        }
        let client = try RawClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readHead().status, 200)
        XCTAssertNotNil(try client.readChunk())
        let started = Date()
        server.drain(gracePeriodMilliseconds: 200)
        let took = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(took, 0.2)
        XCTAssertLessThan(took, 2.0)
        XCTAssertEqual(closed.wait(timeout: .now() + 1), .success)
        XCTAssertEqual(server.activeRequests, 0)
    }

    func testOnceDrainingEveryAnswerEndsItsKeepAliveConnectionSoTheDrainEndsWithTheRequestsInProgress() throws {
        let server = try startServer { _, _, writer in
            writer.respond(status: 200, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8))
        }
        let client = try RawClient(port: server.port)
        let before = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(before.status, 200)
        XCTAssertNil(before.header("Connection"), "before the drain the connection stays open")

        server.closeConnectionsAfterAnswers()
        XCTAssertTrue(server.quiesce())
        // The client's next request on its open connection is answered, then the connection ends.
        let during = try client.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(during.status, 200)
        XCTAssertEqual(during.text, "ok")
        XCTAssertEqual(during.header("Connection")?.lowercased(), "close")
        XCTAssertTrue(client.isClosedByServer())
        XCTAssertTrue(server.waitUntilIdle(deadline: .now() + 3))
        server.stop()
    }

    func testAnAnswerThatArrivesAfterTheDrainBeganEndsItsConnection() throws {
        let answerNow = DispatchSemaphore(value: 0)
        let server = try startServer { _, _, writer in
            onAnotherThread {
                answerNow.wait()   // the upstream's answer comes once the drain has begun: the case under test
                writer.respond(status: 200, headers: [], body: Array("late".utf8))
            }
        }
        let client = try RawClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(waitUntil { server.activeRequests == 1 })
        server.closeConnectionsAfterAnswers()
        answerNow.signal()
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "late")
        XCTAssertEqual(response.header("Connection")?.lowercased(), "close")
        XCTAssertTrue(client.isClosedByServer())
        server.stop()
    }
}
