import Foundation
import Keyward
import XCTest

/// Keyward's own error answers name their code in `Keyward-Error`; a relayed answer never carries
/// the field, even when the provider sends one, so a client can tell Keyward's 401 from the provider's.
final class KeywardErrorHeaderTests: XCTestCase {
    var env: TestDeployment!
    var upstream: RawUpstream?

    override func tearDown() {
        env?.shutdown()
        upstream?.stop()
    }

    func testEveryOwnRefusalCarriesItsCode() throws {
        env = try TestDeployment()
        let missingSession = try env.client.call("GET", "/p/chat/v1/models")
        XCTAssertEqual(missingSession.status, 401)
        XCTAssertEqual(missingSession.header("keyward-error"), "session_invalid")
        XCTAssertEqual(missingSession.header("www-authenticate"), "Bearer realm=\"keyward\"", "a 401 names the scheme (RFC 6750 §3)")
        let junkSession = try env.client.call("GET", "/v1/usage", headers: [("Authorization", "Bearer junk")])
        XCTAssertEqual(junkSession.status, 401)
        XCTAssertEqual(junkSession.header("www-authenticate"), "Bearer realm=\"keyward\"", "no detail of which check failed")

        let unknownRoute = try env.client.call("GET", "/v2/nothing")
        XCTAssertEqual(unknownRoute.header("keyward-error"), "not_found")

        let wrongMethod = try env.client.call("GET", "/v1/challenge")
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.header("keyward-error"), "method_not_allowed")

        let (badBody, _) = try env.client.postJSON("/v1/attest/ios", ["key_id": "%%%"])
        XCTAssertEqual(badBody.status, 400)
        XCTAssertEqual(badBody.header("keyward-error"), "bad_request")

        // The HTTP layer's own refusals (here a body over the handshake limit) carry it too.
        let tooLarge = try env.client.call("POST", "/v1/challenge", body: [UInt8](repeating: 0x61, count: 70_000))
        XCTAssertEqual(tooLarge.status, 413)
        XCTAssertEqual(tooLarge.header("keyward-error"), "payload_too_large")

        let headTooLarge = try env.client.call("POST", "/v1/challenge", headers: [("X-Padding", String(repeating: "a", count: 17_000))])
        XCTAssertEqual(headTooLarge.status, 431)
        XCTAssertEqual(headTooLarge.header("keyward-error"), "bad_request")

        let success = try env.client.call("POST", "/v1/challenge")
        XCTAssertEqual(success.status, 200)
        XCTAssertNil(success.header("keyward-error"))
    }

    func testTheProvidersOwn401HasNoKeywardErrorEvenWhenTheProviderSendsOne() throws {
        let upstream = try RawUpstream(
            answer: "HTTP/1.1 401 Unauthorized\r\nKeyward-Error: session_invalid\r\nkeyward-error: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        self.upstream = upstream
        let port = upstream.port
        env = try TestDeployment(extraProviders: { _ in TestDeployment.loopbackProvider("raw", port: port, allow: [("GET", "/x")]) })
        let (_, token) = try env.session()
        let relayed = try env.client.call("GET", "/p/raw/x", headers: [env.bearer(token)])
        XCTAssertEqual(relayed.status, 401)
        XCTAssertEqual(relayed.body, Array("{}".utf8))
        XCTAssertNil(relayed.header("keyward-error"))
        XCTAssertEqual(relayed.header("content-type"), "application/json")
    }

    func testTheProvidersOwnKeywardRequestIdIsDroppedAndKeywardsIsTheOnlyOne() throws {
        let upstream = try RawUpstream(
            answer: "HTTP/1.1 200 OK\r\nX-Keyward-Request-Id: fake\r\nX-Request-Id: provider-7\r\nContent-Length: 2\r\n\r\n{}")
        self.upstream = upstream
        let port = upstream.port
        env = try TestDeployment(extraProviders: { _ in TestDeployment.loopbackProvider("raw", port: port, allow: [("GET", "/x")]) })
        let (_, token) = try env.session()
        let relayed = try env.client.call("GET", "/p/raw/x", headers: [env.bearer(token)])
        XCTAssertEqual(relayed.status, 200)
        let ids = relayed.headers.filter { $0.0.lowercased() == "x-keyward-request-id" }.map(\.1)
        XCTAssertEqual(ids.count, 1, "\(ids)")
        XCTAssertNotEqual(ids.first, "fake")
        XCTAssertEqual(ids.first?.count, 16, "Keyward's id: 16 hex digits")
        // The provider's own request id is the provider's business and passes.
        XCTAssertEqual(relayed.header("x-request-id"), "provider-7")
    }
}
