import Foundation
import Keyward
import KeywardDemo
import TestWaiting
import XCTest

/// Answers a provider frames badly or oddly: the client gets either a correctly framed answer or
/// one 502 `upstream_error`, never a truncated body, a glued header or a silent close.
final class ProxyUpstreamFramingTests: XCTestCase {
    var env: TestDeployment!
    var upstream: RawUpstream!

    override func tearDown() {
        env?.shutdown()
        upstream?.stop()
    }

    /// The answer to a provider that broke HTTP: 502 `upstream_error`, logged as `upstream_protocol`.
    private func assertUpstreamProtocolError(
        _ result: (status: Int, body: String, reason: String?, headers: (String) -> String?), file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(result.status, 502, file: file, line: line)
        XCTAssertEqual(result.body, #"{"error":"upstream_error"}"#, file: file, line: line)
        XCTAssertEqual(result.reason, "upstream_protocol", file: file, line: line)
    }

    private func call(answer: String) throws -> (status: Int, body: String, reason: String?, headers: (String) -> String?) {
        upstream = try RawUpstream(answer: answer)
        let port = upstream.port
        env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("raw", port: port, allow: [("GET", "/x")])
        })
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/raw/x", headers: [env.bearer(token)])
        return (response.status, String(decoding: response.body, as: UTF8.self), env.lastReason(route: "proxy"), { response.header($0) })
    }

    func testBytesAnIdleUpstreamConnectionSendsUnaskedNeverReachTheNextClient() throws {
        // A 204, then 0.3 s later a whole second response nobody asked for. libcurl 7.88 would
        // take the cached connection as alive and read those bytes as the next request's answer.
        upstream = try RawUpstream(
            answer: "HTTP/1.1 204 No Content\r\n\r\n",
            late: "HTTP/1.1 200 OK\r\nX-Smuggled: yes\r\nContent-Length: 8\r\n\r\nSMUGGLED")
        let port = upstream.port
        // One shard: both calls share its libcurl connection pool.
        env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("raw", port: port, allow: [("GET", "/x")])
        }, shards: 1)
        let (_, token) = try env.session()
        XCTAssertEqual(try env.client.call("GET", "/p/raw/x", headers: [env.bearer(token)]).status, 204)
        // The unasked bytes are in Keyward's socket before the next call: its loop sees them first.
        XCTAssertTrue(waitUntil(timeout: 5) { upstream.lateSent }, "the upstream never sent its late bytes")
        let next = try env.client.call("GET", "/p/raw/x", headers: [env.bearer(token)])
        XCTAssertEqual(next.status, 204)
        XCTAssertNil(next.header("x-smuggled"))
        XCTAssertEqual(next.body, [])
    }

    func testConnectionsTheProviderClosedWhileIdleAreNeverReused() throws {
        // Providers and load balancers close idle keep-alive connections. Keyward's loop sees each
        // close on the parked socket and kills the connection; libcurl must then take it as dead
        // and open a new one, not send the next request into it (a 502 for that client).
        upstream = try RawUpstream(answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", closeIdleAfter: 0.2)
        let port = upstream.port
        env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("raw", port: port, allow: [("GET", "/x")])
        }, shards: 1)
        let (_, token) = try env.session()
        let (env, upstream) = (self.env!, self.upstream!)
        let calls = 16
        for round in 1...2 {
            let statuses = ConcurrentResults<Int>()
            DispatchQueue.concurrentPerform(iterations: calls) { _ in
                statuses.append((try? env.client.call("GET", "/p/raw/x", headers: [env.bearer(token)]).status) ?? -1)
            }
            XCTAssertEqual(statuses.values, Array(repeating: 200, count: calls), "concurrent round \(round)")
            // Every connection made so far closed by the provider before the next calls: the pool
            // holds only connections the provider has closed.
            let accepted = upstream.acceptedConnections
            XCTAssertTrue(waitUntil(timeout: 10) { upstream.closedConnections == accepted }, "round \(round)")
            // One at a time, each call meets the closed connections first.
            for call in 1...4 {
                XCTAssertEqual(try env.client.call("GET", "/p/raw/x", headers: [env.bearer(token)]).status, 200, "round \(round), call \(call)")
            }
            let acceptedNow = upstream.acceptedConnections
            XCTAssertTrue(waitUntil(timeout: 10) { upstream.closedConnections == acceptedNow }, "round \(round)")
        }
        XCTAssertNil(env.lastReason(route: "proxy"))
    }

    func testNotModifiedCarriesNoBody() throws {
        let result = try call(answer: "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 10\r\n\r\n")
        XCTAssertEqual(result.status, 304)
        XCTAssertEqual(result.body, "")
        XCTAssertEqual(result.headers("etag"), "\"v1\"")
        XCTAssertNil(result.headers("transfer-encoding"))
    }

    func testLengthBesideAChunkedCodingIsAnUpstreamError() throws {
        // RFC 9112 §6.3 item 3: the mark of response splitting, "ought to be handled as an error".
        let result = try call(answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
        assertUpstreamProtocolError(result)
    }

    func testACodingBesideChunkedIsAnUpstreamError() throws {
        // libcurl removes the chunking only; relaying the rest as plain chunked would hand the
        // client gzip bytes with no label. The 502 comes before any byte of the answer.
        let result = try call(answer: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
        assertUpstreamProtocolError(result)
        XCTAssertNil(result.headers("content-encoding"))
    }

    func testDisagreeingLengthsAreAnUpstreamError() throws {
        let result = try call(answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi!")
        assertUpstreamProtocolError(result)
    }

    func testBareCarriageReturnInAFieldIsAnUpstreamError() throws {
        let result = try call(answer: "HTTP/1.1 200 OK\r\nX-A: a\rInjected: yes\r\nContent-Length: 2\r\n\r\nhi")
        assertUpstreamProtocolError(result)
    }

    func testHeadOverEightKibibytesIsAnUpstreamError() throws {
        let fields = (0..<100).map { "X-H\($0): " + String(repeating: "h", count: 100) + "\r\n" }.joined()
        let result = try call(answer: "HTTP/1.1 200 OK\r\n\(fields)Content-Length: 2\r\n\r\nhi")
        XCTAssertEqual(result.status, 502)
        XCTAssertEqual(result.reason, "upstream_protocol")
    }
}
