import Foundation
import HTTPServer
import Keyward
import KeywardDemo
import Synchronization
import TestWaiting
import XCTest

/// A small answer of known length read whole with its head goes out as one response; every other
/// answer streams from its first bytes, and an upstream failing mid-body cuts the client's stream.
final class ProxySmallAnswerTests: XCTestCase {
    /// An upstream that sends the head with `Content-Length: declared`, then `pieces` of the body
    /// `pauseSeconds` apart, then either finishes or, when the pieces fall short, cuts the connection.
    private func pacedUpstream(declared: Int, pieces: [String], pauseSeconds: Double) -> HTTPServer {
        HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1),
            bodyLimit: { _ in 1024 },
            handler: { _, _, writer in
                let stream = writer.startStream(
                    status: 201, headers: [("Content-Type", "text/plain"), ("Content-Length", String(declared)), ("X-Upstream", "paced")])
                DispatchQueue.global().async {
                    for (index, piece) in pieces.enumerated() {
                        if index > 0 { Thread.sleep(forTimeInterval: pauseSeconds) }  // a paced upstream: the behaviour under test
                        stream.write(Array(piece.utf8))
                    }
                    if pieces.joined().utf8.count == declared { stream.finish() } else { stream.abort() }
                }
            })
    }

    /// Starts the paced upstream and a deployment in front of it as provider `paced` (both stopped
    /// when the test ends); returns the deployment and a session token.
    private func deploy(declared: Int, pieces: [String], pauseSeconds: Double) throws -> (TestDeployment, String) {
        let upstream = pacedUpstream(declared: declared, pieces: pieces, pauseSeconds: pauseSeconds)
        try upstream.start()
        addTeardownBlock { upstream.stop() }
        let env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("paced", port: upstream.port, allow: [("GET", "/answer")])
        })
        addTeardownBlock { env.shutdown() }
        let (_, token) = try env.session()
        return (env, token)
    }

    func testSmallAnswerReadInOnePieceArrivesWhole() throws {
        let (env, token) = try deploy(declared: 10, pieces: ["helloworld"], pauseSeconds: 0)

        let response = try env.client.call("GET", "/p/paced/answer", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.body, Array("helloworld".utf8))
        XCTAssertEqual(response.header("content-length"), "10")
        XCTAssertEqual(response.header("x-upstream"), "paced")
        XCTAssertNil(response.header("transfer-encoding"))
        XCTAssertNotNil(response.header("x-keyward-request-id"))
        let line = try XCTUnwrap(env.logLines.last { $0.contains("\"provider\":\"paced\"") })
        XCTAssertTrue(line.contains("\"status\":201"), line)
        XCTAssertTrue(line.contains("\"bytes_out\":10"), line)
    }

    func testSmallAnswerArrivingInPiecesStreamsFromTheFirstPiece() throws {
        let (env, token) = try deploy(declared: 10, pieces: ["hello", "world"], pauseSeconds: 0.5)

        let started = DispatchTime.now()
        let firstChunk = Mutex<(at: DispatchTime, bytes: [UInt8])?>(nil)
        let result = try env.client.stream("GET", "/p/paced/answer", headers: [env.bearer(token)]) { chunk in
            firstChunk.withLock { if $0 == nil { $0 = (DispatchTime.now(), chunk) } }
        }
        XCTAssertEqual(result.status, 201)
        XCTAssertEqual(result.body, Array("helloworld".utf8))
        let first = try XCTUnwrap(firstChunk.withLock { $0 })
        XCTAssertEqual(first.bytes, Array("hello".utf8))
        // "hello" came before the upstream's 0.5 s pause ended: nothing waited for the rest.
        XCTAssertLessThan(Double(first.at.uptimeNanoseconds - started.uptimeNanoseconds) / 1e9, 0.4)
    }

    func testSmallAnswerCutBeforeItsFirstBodyByteIsAnUpstreamError() throws {
        let (env, token) = try deploy(declared: 100, pieces: [], pauseSeconds: 0)

        let response = try env.client.call("GET", "/p/paced/answer", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 502)
        XCTAssertEqual(errorCode(response.body), "upstream_error")
        XCTAssertNil(response.header("x-upstream"))
        let reason = try XCTUnwrap(env.lastReason(route: "proxy"))
        XCTAssertTrue(reason.hasPrefix("upstream_"), reason)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_requests_total", ["route": "proxy", "provider": "paced", "status": "502"]), 1)
    }

    func testSmallAnswerCutAfterItsFirstBytesIsCutForTheClientToo() throws {
        // The empty second piece only makes the upstream wait 0.3 s, so the forty bytes go out before the cut.
        let (env, token) = try deploy(declared: 100, pieces: ["only forty bytes of a hundred, then gone", ""], pauseSeconds: 0.3)

        let received = Mutex<[UInt8]>([])
        XCTAssertThrowsError(try env.client.stream("GET", "/p/paced/answer", headers: [env.bearer(token)]) { chunk in
            received.withLock { $0 += chunk }
        })
        XCTAssertEqual(received.withLock { $0 }, Array("only forty bytes of a hundred, then gone".utf8))
    }

    func testAnswerOverTheOneShotLimitStreamsItsFirstBytesBeforeTheLast() throws {
        let first = String(repeating: "a", count: 20 * 1024)
        let (env, token) = try deploy(declared: first.utf8.count + 4, pieces: [first, "tail"], pauseSeconds: 0.5)

        let started = DispatchTime.now()
        let firstChunkAt = Mutex<DispatchTime?>(nil)
        let result = try env.client.stream("GET", "/p/paced/answer", headers: [env.bearer(token)]) { _ in
            firstChunkAt.withLock { if $0 == nil { $0 = DispatchTime.now() } }
        }
        let ended = DispatchTime.now()
        XCTAssertEqual(result.status, 201)
        XCTAssertEqual(result.body, Array((first + "tail").utf8))
        let firstAt = try XCTUnwrap(firstChunkAt.withLock { $0 })
        // The first bytes came before the upstream's 0.5 s pause ended, not with the last ones.
        XCTAssertLessThan(Double(firstAt.uptimeNanoseconds - started.uptimeNanoseconds) / 1e9, 0.4)
        XCTAssertGreaterThan(Double(ended.uptimeNanoseconds - firstAt.uptimeNanoseconds) / 1e9, 0.3)
    }
}
