import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Synchronization
import TestWaiting
import XCTest

/// The proxy over loopback: a simulated device's session, Keyward, and a fake provider.
final class ProxyEndToEndTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    func testAllowlistedPostArrivesWithExactlyOneKeyAndNoClientCredentials() throws {
        try checkAllowlistedPost(shards: 2)
    }

    private func checkAllowlistedPost(shards: Int) throws {
        env = try TestDeployment(shards: shards)
        let (_, token) = try env.session()
        let body = Array("{\"model\":\"m\",\"messages\":[]}".utf8)
        let response = try env.client.call(
            "POST", "/p/chat/v1/chat/completions",
            headers: [
                env.bearer(token), ("Content-Type", "application/json"), ("Cookie", "a=b"), ("X-Api-Key", "client-key"),
                ("X-Forwarded-For", "10.0.0.1"), ("Forwarded", "for=10.0.0.1"), ("X-Real-IP", "10.0.0.1"),
                ("Proxy-Authorization", "Basic eA=="), ("X-Keyward-Timestamp", "1"), ("Connection", "X-Drop-Me"),
                ("X-Drop-Me", "1"), ("X-Custom", "kept"), ("X-HTTP-Method-Override", "DELETE"),
            ],
            body: body)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "data: 1\n\ndata: 2\n\ndata: 3\n\ndata: [DONE]\n\n")
        XCTAssertEqual(response.header("content-type"), "text/event-stream")
        XCTAssertNil(response.header("set-cookie"), "Set-Cookie must not reach the client")
        XCTAssertEqual(response.header("x-keyward-request-id")?.count, 16)

        let received = try XCTUnwrap(env.provider.received.last)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.target, "/v1/chat/completions")
        XCTAssertEqual(received.body, body)
        let names = received.headers.map { $0.name.lowercased() }
        XCTAssertEqual(names.filter { $0 == "authorization" }.count, 1)
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer " + TestDeployment.providerKey)
        for stripped in ["cookie", "x-api-key", "x-forwarded-for", "forwarded", "x-real-ip", "proxy-authorization",
                         "x-keyward-timestamp", "x-drop-me", "x-http-method-override"] {
            XCTAssertFalse(names.contains(stripped), "\(stripped) reached the provider")
        }
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-custom" }?.value, "kept")
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "host" }?.value, "127.0.0.1:\(env.provider.port)")
        XCTAssertFalse(received.headers.contains { $0.value.contains("10.0.0.1") || $0.value.contains(token) })
    }

    func testServerSentEventsArriveBeforeTheNextIsWritten() throws {
        try checkServerSentEvents(shards: 2)
    }

    private func checkServerSentEvents(shards: Int) throws {
        env = try TestDeployment(eventCount: 2, eventGapMillis: 500, shards: shards)
        let (_, token) = try env.session()
        let start = DispatchTime.now()
        let arrivals = Mutex<[(String, Double)]>([])
        let result = try env.client.stream(
            "POST", "/p/chat/v1/chat/completions", headers: [env.bearer(token)], body: Array("{}".utf8)
        ) { chunk in
            let at = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
            for event in String(decoding: chunk, as: UTF8.self).split(separator: "\n") {
                arrivals.withLock { $0.append((String(event), at)) }
            }
        }
        XCTAssertEqual(result.status, 200)
        let events = arrivals.withLock { $0 }
        XCTAssertEqual(events.map(\.0), ["data: 1", "data: 2", "data: [DONE]"])
        // Event 2 is written 500 ms after event 1: event 1 must have arrived well before that.
        XCTAssertGreaterThan(events[1].1 - events[0].1, 350, "event 1 was held back until event 2")
    }

    func testNonCanonicalPathsAreRefusedWithNothingSentUpstream() throws {
        env = try TestDeployment()
        let (_, token) = try env.session()
        let paths = [
            "/p/chat/v1/chat/completions/..%2F..%2Ffiles", "/p/chat/v1/%2e%2e/files", "/p/chat/v1/chat%2fcompletions",
            "/p/chat/v1/chat/completions%00", "/p/chat/v1//chat/completions", "/p/chat/v1/chat/completions/.",
            "/p/chat/v1/%252e%252e/files", "/p/chat/v1/chat\\completions", "/p/chat/v1/files/a/../../models",
        ]
        for path in paths {
            let response = try env.client.call("POST", path, headers: [env.bearer(token)], body: Array("{}".utf8))
            XCTAssertEqual(response.status, 400, path)
            XCTAssertEqual(errorCode(response.body), "bad_request", path)
        }
        XCTAssertEqual(env.provider.received.count, 0)
    }

    func testMethodNotAllowlistedBodyOverLimitAndUnknownProviderAreRefused() throws {
        env = try TestDeployment(chatOptions: "max_body_bytes = 1024")
        let (_, token) = try env.session()
        let notAllowed = try env.client.call("DELETE", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(notAllowed.status, 403)
        XCTAssertEqual(errorCode(notAllowed.body), "forbidden")
        // A GET rule admits GET only: HEAD needs a rule of its own (RFC 9110 §9.1: methods are exact).
        let head = try env.client.call("HEAD", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(head.status, 403)
        XCTAssertEqual(env.lastReason(route: "proxy"), "not_allowlisted")
        let otherPath = try env.client.call("GET", "/p/chat/v1/secrets", headers: [env.bearer(token)])
        XCTAssertEqual(otherPath.status, 403)
        let tooLarge = try env.client.call("POST", "/p/chat/v1/chat/completions", headers: [env.bearer(token)], body: Array(repeating: 0x61, count: 2048))
        XCTAssertEqual(tooLarge.status, 413)
        XCTAssertEqual(errorCode(tooLarge.body), "payload_too_large")
        let unknown = try env.client.call("GET", "/p/nosuch/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(errorCode(unknown.body), "not_found")
        let getWithBody = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)], body: Array("x".utf8))
        XCTAssertEqual(getWithBody.status, 400)
        XCTAssertEqual(env.provider.received.count, 0)
        // The glob: one or more whole segments.
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/files/a/b", headers: [env.bearer(token)]).status, 200)
        XCTAssertEqual(env.provider.received.last?.target, "/v1/files/a/b")
    }

    /// A path ending in `/` is its own path: allowed only by a rule ending in `/`, and sent upstream
    /// with the `/` (and the query) as the client sent them.
    func testAPathEndingInSlashReachesTheProviderOnlyThroughARuleEndingInSlash() throws {
        env = try TestDeployment(extraProviders: { port in
            TestDeployment.loopbackProvider("rest", port: port, allow: [("GET", "/api/items/"), ("GET", "/api/items/*/"), ("GET", "/api/users/*")])
        })
        let (_, token) = try env.session()
        let collection = try env.client.call("GET", "/p/rest/api/items/?page=2", headers: [env.bearer(token)])
        XCTAssertEqual(collection.status, 200)
        XCTAssertEqual(env.provider.received.last?.target, "/api/items/?page=2")
        XCTAssertEqual(try env.client.call("GET", "/p/rest/api/items/7/", headers: [env.bearer(token)]).status, 200)
        XCTAssertEqual(env.provider.received.last?.target, "/api/items/7/")
        let sent = env.provider.received.count
        // Without the `/`, and a `*` rule against a path with one: not allowlisted, nothing sent.
        for path in ["/p/rest/api/items", "/p/rest/api/users/7/", "/p/rest/api/items/7"] {
            let response = try env.client.call("GET", path, headers: [env.bearer(token)])
            XCTAssertEqual(response.status, 403, path)
            XCTAssertEqual(errorCode(response.body), "forbidden", path)
        }
        // `//` stays a path trick, at the end too.
        let doubled = try env.client.call("GET", "/p/rest/api/items//", headers: [env.bearer(token)])
        XCTAssertEqual(doubled.status, 400)
        XCTAssertEqual(env.provider.received.count, sent)
    }

    func testMissingBadOrForeignSessionsAreRefused() throws {
        env = try TestDeployment()
        let (_, token) = try env.session()
        for headers in [[], [("Authorization", "Bearer")], [("Authorization", "Bearer x.y.z")], [("Authorization", "Basic " + token)],
                        [("Authorization", "Bearer " + tamperedSignature(token))]] {
            let response = try env.client.call("GET", "/p/chat/v1/models", headers: headers)
            XCTAssertEqual(response.status, 401)
            XCTAssertEqual(errorCode(response.body), "session_invalid")
        }
        XCTAssertEqual(env.provider.received.count, 0)
    }

    /// The token with one signature character changed to a different one, always.
    /// (Writing fixed characters over the end left it unchanged once in 256 runs.)
    private func tamperedSignature(_ token: String) -> String {
        var characters = Array(token)
        let index = characters.count - 10  // inside the signature, clear of its padding bits
        characters[index] = characters[index] == "A" ? "B" : "A"
        return String(characters)
    }

    func testTwoAuthorizationFieldsAreRefused() throws {
        env = try TestDeployment()
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token), ("Authorization", "Bearer junk")])
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(env.lastReason(route: "proxy"), "session_missing")
        XCTAssertEqual(env.provider.received.count, 0)
    }

    func testRedirectIsPassedBackNotFollowed() throws {
        // A second local listener that must receive nothing.
        let bystander = FakeProvider(expectedAuthorization: "none")
        try bystander.start()
        defer { bystander.stop() }
        let redirector = RedirectingProvider(location: "http://127.0.0.1:\(bystander.port)/steal")
        try redirector.start()
        defer { redirector.stop() }
        env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("redir", port: redirector.port, allow: [("GET", "/go")])
        })
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/redir/go", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 302)
        XCTAssertEqual(response.header("location"), "http://127.0.0.1:\(bystander.port)/steal")
        // A proxy that followed the redirect would reach the bystander about now.
        XCTAssertTrue(staysFalse(for: 0.2) { bystander.received.count > 0 })
        XCTAssertEqual(bystander.received.count, 0)
    }

    func testQueryKeyProviderSendsExactlyOurKey() throws {
        env = try TestDeployment(extraProviders: { port in
            """
            [gem]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "QUERY_KEY"
            auth = { type = "query", name = "key" }
            allow = [ { method = "GET", path = "/v1/models" } ]
            """
        })
        let (_, token) = try env.session()
        _ = try env.client.call("GET", "/p/gem/v1/models?key=c1&KEY=c2&k%65y=c3&key=&alt=json", headers: [env.bearer(token)])
        let target = try XCTUnwrap(env.provider.received.last?.target)
        XCTAssertEqual(target, "/v1/models?alt=json&key=" + TestDeployment.queryKey)
    }

    func testRateLimitFivePerMinuteUnderFiftyConcurrentRequests() throws {
        env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 5 }")
        let (_, token) = try env.session()
        let statuses = ConcurrentResults<Int>()
        let env = self.env!
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            let response = try? env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
            statuses.append(response?.status ?? -1)
        }
        XCTAssertEqual(statuses.values.filter { $0 == 200 }.count, 5)
        XCTAssertEqual(statuses.values.filter { $0 == 429 }.count, 45)
    }

    func testRateLimitHasNoDoubleBurstAtTheWindowBoundary() throws {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 5 }", time: clock)
        let (_, token) = try env.session()
        let start = clock.nowMillis()
        clock.set(millis: start + 59_500)
        let first = try (0..<5).map { _ in try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status }
        clock.set(millis: start + 60_500)
        let second = try (0..<5).map { _ in try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]) }
        XCTAssertEqual(first, [200, 200, 200, 200, 200])
        XCTAssertEqual(second.map(\.status), [429, 429, 429, 429, 429])
        XCTAssertEqual(second[0].header("retry-after"), "59")
    }

    func testRevokedDeviceSessionStopsWithinTheCheckInterval() throws {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        env = try TestDeployment(time: clock)
        let (device, token) = try env.session()
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        XCTAssertTrue(try env.deployment.store.setRevoked(deviceID: Hex.encode(device.keyID), true, now: clock.nowSeconds()))
        clock.advance(millis: 31_000)
        let response = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(errorCode(response.body), "session_invalid")
    }

    func testUnrevokingBringsBackNoSessionIssuedBeforeTheRevocation() throws {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        env = try TestDeployment(time: clock)
        let (device, token) = try env.session()
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        let deviceID = Hex.encode(device.keyID)
        XCTAssertTrue(try env.deployment.store.setRevoked(deviceID: deviceID, true, now: clock.nowSeconds()))
        clock.advance(millis: 5_000)
        XCTAssertTrue(try env.deployment.store.setRevoked(deviceID: deviceID, false, now: clock.nowSeconds()))
        clock.advance(millis: 31_000)   // past the revocation check interval: the status is read again
        let old = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(old.status, 401)
        XCTAssertEqual(errorCode(old.body), "session_invalid")
        XCTAssertTrue(env.logLines.contains { $0.contains("session_revoked") }, "the reason is logged")
        let (status, json) = try env.assert(device)   // a new handshake of the same key
        XCTAssertEqual(status, 200, "\(json)")
        let fresh = try XCTUnwrap(json["token"] as? String)
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(fresh)]).status, 200)
    }

    func testUnreachableUpstreamIsUpstreamError() throws {
        env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("down", port: 1, allow: [("GET", "/x")])
        })
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/down/x", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 502)
        XCTAssertEqual(errorCode(response.body), "upstream_error")
    }

    func testReloadKeepsTheOldRegistryWhenTheNewOneIsBrokenAndTakesAFixedOne() throws {
        env = try TestDeployment()
        let (_, token) = try env.session()
        try env.deployment.writeProviders("[broken\nbase_url = 1")
        XCTAssertFalse(env.deployment.server.reload())
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        XCTAssertTrue(env.logLines.contains { $0.contains("providers_reload_refused") && $0.contains("providers.toml") })

        try env.deployment.writeProviders(
            TestDeployment.chatProvider(port: env.provider.port, options: "") + "\n"
                + TestDeployment.loopbackProvider("second", port: env.provider.port, allow: [("GET", "/v2/models")]))
        XCTAssertTrue(env.deployment.server.reload())
        let response = try env.client.call("GET", "/p/second/v2/models", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(env.provider.received.last?.target, "/v2/models")
    }

    func testNoLogLineOrResponseCarriesAKeyOrSessionToken() throws {
        env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 3 }")
        let (_, token) = try env.session()
        var responses: [[UInt8]] = []
        for path in ["/p/chat/v1/models", "/p/chat/v1/models", "/p/chat/v1/%2e%2e/x", "/p/chat/v1/models", "/p/chat/v1/models"] {
            let response = try env.client.call("GET", path, headers: [env.bearer(token)])
            responses.append(response.body + Array(response.headers.map { $0.0 + ": " + $0.1 }.joined(separator: "\n").utf8))
        }
        let secrets = [TestDeployment.providerKey, TestDeployment.queryKey, token]
        for line in env.logLines {
            for secret in secrets { XCTAssertFalse(line.contains(secret), "a secret reached the log: \(line.prefix(80))") }
        }
        for response in responses {
            let text = String(decoding: response, as: UTF8.self)
            for secret in secrets { XCTAssertFalse(text.contains(secret), "a secret reached a response") }
        }
        XCTAssertGreaterThan(env.logLines.count, 5)
    }
}
