import Foundation
import KeywardClient
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `KeywardClient` driven against a real Keyward on loopback, with the App Attest simulator behind
/// the SDK's attestation protocol. Counts are read from the server's own log lines.
final class ClientAgainstServerTests: XCTestCase {
    var live: LiveKeyward!

    override func setUpWithError() throws { live = try LiveKeyward() }
    override func tearDown() { live?.shutdown() }

    let models = ProviderRequest(provider: "chat", path: "/v1/models")

    func testFirstRunAttestsAndASecondClientWithTheStoredKeyAsserts() async throws {
        let attestation = live.attestation()
        let store = InMemoryKeyIDStore()
        let first = try live.client(attestation: attestation, keyStore: store)
        let (body, response) = try await first.send(models)
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertTrue(String(decoding: body, as: UTF8.self).contains("\"target\":\"/v1/models\""))
        XCTAssertEqual(live.statuses(route: "attest_ios"), [200])
        XCTAssertEqual(live.statuses(route: "assert_ios"), [])
        let keyID = try XCTUnwrap(store.loadKeyID())
        XCTAssertEqual(Data(base64Encoded: keyID)?.count, 32, "the key id is stored as generateKey returned it")

        let second = try live.client(attestation: attestation, keyStore: store)
        let (_, again) = try await second.send(models)
        XCTAssertEqual(again.statusCode, 200)
        XCTAssertEqual(live.statuses(route: "attest_ios"), [200], "no second attestation")
        XCTAssertEqual(live.statuses(route: "assert_ios"), [200])
        XCTAssertEqual(attestation.keysGenerated, 1)
        XCTAssertEqual(store.loadKeyID(), keyID)
    }

    func testFiftyConcurrentSendsOnAFreshClientShareOneChallengeAndOneAttestation() async throws {
        let client = try live.client(attestation: live.attestation())
        let request = models
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try await client.send(request).1.statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(statuses, Array(repeating: 200, count: 50))
        XCTAssertEqual(live.statuses(route: "challenge").count, 1)
        XCTAssertEqual(live.statuses(route: "attest_ios"), [200])
        XCTAssertEqual(live.providerRequests("/v1/models"), 50)
    }

    func testSessionIsRefreshedBeforeExpiryAndAnExpiredOneIsRenewedTransparently() async throws {
        live.shutdown()
        live = try LiveKeyward(sessionTTLSeconds: 600)
        let client = try live.client(attestation: live.attestation())
        _ = try await client.send(models)
        let firstSession = try await client.session()
        XCTAssertEqual(live.statuses(route: "challenge").count, 1)

        // 530 s later 70 s remain, more than the 60 s margin: the cached session is used.
        live.advance(seconds: 530)
        _ = try await client.send(models)
        XCTAssertEqual(live.statuses(route: "challenge").count, 1)
        let stillFirst = try await client.session()
        XCTAssertEqual(stillFirst, firstSession)

        // 20 s later 50 s remain: the next call renews first (an assertion, not a new key).
        live.advance(seconds: 20)
        let (_, refreshed) = try await client.send(models)
        XCTAssertEqual(refreshed.statusCode, 200)
        XCTAssertEqual(live.statuses(route: "assert_ios"), [200])
        let secondSession = try await client.session()
        XCTAssertNotEqual(secondSession.token, firstSession.token)
        XCTAssertEqual(secondSession.expiresAt, live.clock.nowSeconds() + 600)

        // Long past its expiry (the app slept): renewed before the request goes out.
        live.advance(seconds: 3600)
        let (_, renewed) = try await client.send(models)
        XCTAssertEqual(renewed.statusCode, 200)
        XCTAssertEqual(live.statuses(route: "assert_ios"), [200, 200])
        XCTAssertEqual(live.statuses(route: "proxy"), [200, 200, 200, 200], "no request was refused on the way")
    }

    func testADeviceClockTwoHoursAheadKeepsUsingItsSessionUntilItsLifetimeRunsOut() async throws {
        live.shutdown()
        live = try LiveKeyward(sessionTTLSeconds: 600)
        let offset = ClockOffset()
        offset.set(2 * 3600)
        let client = try live.client(attestation: live.attestation(), clockOffset: offset)
        _ = try await client.send(models)
        // The server's expires_at is two hours in the device's past, but 500 s of the session's
        // 600 s are left: the cached session is used.
        live.advance(seconds: 500)
        _ = try await client.send(models)
        XCTAssertEqual(live.statuses(route: "challenge").count, 1)
        XCTAssertEqual(live.statuses(route: "assert_ios"), [], "no renewal while the lifetime lasts")
        // 50 s left, under the 60 s margin: renewed before the request goes out, no 401 on the way.
        live.advance(seconds: 50)
        _ = try await client.send(models)
        XCTAssertEqual(live.statuses(route: "assert_ios"), [200])
        XCTAssertEqual(live.statuses(route: "proxy"), [200, 200, 200])
    }

    func testADeviceClockTwoHoursBehindRenewsItsSessionBeforeTheServerWouldRefuseIt() async throws {
        live.shutdown()
        live = try LiveKeyward(sessionTTLSeconds: 600)
        let offset = ClockOffset()
        offset.set(-2 * 3600)
        let client = try live.client(attestation: live.attestation(), clockOffset: offset)
        _ = try await client.send(models)
        // Past the session's end and the server's leeway, though expires_at is still two hours in
        // the device's future: renewed first instead of being sent and refused.
        live.advance(seconds: 700)
        let (_, response) = try await client.send(models)
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(live.statuses(route: "assert_ios"), [200])
        XCTAssertEqual(live.statuses(route: "proxy"), [200, 200], "no session_invalid on the way")
    }

    func testKeywardsSessionInvalidIsRetriedExactlyOnceAfterANewHandshake() async throws {
        // The device's clock runs an hour and a half behind: it believes its session valid while
        // Keyward, past exp + 60 s, refuses it with 401 session_invalid.
        let offset = ClockOffset()
        let client = try live.client(attestation: live.attestation(), clockOffset: offset)
        _ = try await client.send(models)
        live.advance(seconds: 3600 + 120)
        offset.set(-(3600 + 120))

        let (_, response) = try await client.send(models)
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(live.statuses(route: "proxy"), [200, 401, 200])
        XCTAssertEqual(live.statuses(route: "assert_ios"), [200], "one new handshake")
        XCTAssertEqual(live.providerRequests("/v1/models"), 2)
    }

    func testASecondRefusalAfterTheRetryIsThrownNotRetriedAgain() async throws {
        let store = InMemoryKeyIDStore()
        let client = try live.client(attestation: live.attestation(), keyStore: store)
        _ = try await client.send(models)
        try live.revoke(keyID: try XCTUnwrap(store.loadKeyID()))
        do {
            _ = try await client.send(models)
            XCTFail("a revoked device must not get through")
        } catch let error as KeywardError {
            // The proxy refused the session (device revoked); the new handshake was refused too.
            XCTAssertEqual(error.code, .forbidden)
        }
        XCTAssertEqual(live.statuses(route: "proxy"), [200, 401])
        XCTAssertEqual(live.statuses(route: "assert_ios"), [403])
    }

    func testTheProvidersOwn401IsReturnedToTheCallerWithoutRetry() async throws {
        let client = try live.client(attestation: live.attestation())
        let (body, response) = try await client.send(ProviderRequest(provider: "wrongkey", path: "/v1/models"))
        XCTAssertEqual(response.statusCode, 401)
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "{\"error\":\"bad key\"}")
        XCTAssertNil(response.value(forHTTPHeaderField: "Keyward-Error"))
        XCTAssertEqual(live.providerRequests("/v1/models"), 1)
        XCTAssertEqual(live.statuses(route: "proxy"), [401])
        XCTAssertEqual(live.statuses(route: "challenge").count, 1, "no new handshake for the provider's 401")
    }

    func testThePlatformsInvalidKeyErrorMakesANewAttestedKey() async throws {
        let attestation = live.attestation()
        let store = InMemoryKeyIDStore()
        _ = try await live.client(attestation: attestation, keyStore: store).send(models)
        let oldKey = try XCTUnwrap(store.loadKeyID())
        // The app's data was restored onto another device: the stored key id means nothing there.
        attestation.forget(oldKey)

        let (_, response) = try await live.client(attestation: attestation, keyStore: store).send(models)
        XCTAssertEqual(response.statusCode, 200)
        let newKey = try XCTUnwrap(store.loadKeyID())
        XCTAssertNotEqual(newKey, oldKey)
        XCTAssertEqual(attestation.keysGenerated, 2)
        XCTAssertEqual(live.statuses(route: "attest_ios"), [200, 200])
        XCTAssertEqual(live.statuses(route: "assert_ios"), [], "the invalid key never reached the server")
    }

    func testASignedRequestWhoseKeyIsGoneAttestsANewKeyAndIsSentOnce() async throws {
        let attestation = live.attestation()
        let store = InMemoryKeyIDStore()
        let client = try live.client(attestation: attestation, keyStore: store, assertedProviders: ["signed"])
        let signedModels = ProviderRequest(provider: "signed", path: "/v1/models")
        _ = try await client.send(signedModels)
        let oldKey = try XCTUnwrap(store.loadKeyID())
        attestation.forget(oldKey)

        // Ten at once: every one finds the key gone, one new key is attested for all, each goes once more.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 { group.addTask { try await client.send(signedModels).1.statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(statuses, Array(repeating: 200, count: 10))
        XCTAssertNotEqual(store.loadKeyID(), oldKey)
        XCTAssertEqual(attestation.keysGenerated, 2)
        XCTAssertEqual(live.statuses(route: "attest_ios"), [200, 200])
        XCTAssertEqual(live.statuses(route: "proxy"), Array(repeating: 200, count: 11))
    }

    func testASignedRequestIsSignedByItsSessionsKeyWhateverKeyIsStoredSince() async throws {
        let attestation = live.attestation()
        let store = InMemoryKeyIDStore()
        let signedModels = ProviderRequest(provider: "signed", path: "/v1/models")
        let first = try live.client(attestation: attestation, keyStore: store, assertedProviders: ["signed"])
        _ = try await first.send(signedModels)
        // Another client on the same store replaces the stored key with a new one.
        store.deleteKeyID()
        _ = try await live.client(attestation: attestation, keyStore: store, assertedProviders: ["signed"]).send(signedModels)
        XCTAssertEqual(attestation.keysGenerated, 2)

        // The first client's cached session belongs to the first key: it must sign with that one.
        let (_, response) = try await first.send(signedModels)
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(live.statuses(route: "proxy"), [200, 200, 200])
    }

    func testServerSentEventsArriveEventByEvent() async throws {
        let client = try live.client(attestation: live.attestation())
        let stream = try await client.stream(.postJSON(provider: "paced", path: "/v1/events", body: Data("{\"stream\":true}".utf8)))
        XCTAssertEqual(stream.response.statusCode, 200)
        XCTAssertEqual(stream.response.value(forHTTPHeaderField: "Content-Type"), "text/event-stream")
        var events: [ServerSentEvent] = []
        for try await event in stream.events {
            if events.isEmpty {
                XCTAssertFalse(live.pacedEvents.secondWritten, "event 1 arrived before event 2 was written")
                live.pacedEvents.releaseSecond()
            }
            events.append(event)
        }
        XCTAssertEqual(events.map(\.data), ["1", "2\n2b"])
        XCTAssertEqual(events.map(\.event), ["delta", "message"])
    }

    func testTwentyConcurrentSignedRequestsAllPass() async throws {
        let client = try live.client(attestation: live.attestation(), assertedProviders: ["signed"])
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                let request = index.isMultiple(of: 2)
                    ? ProviderRequest(provider: "signed", path: "/v1/models", query: "n=\(index)&x=%20")
                    : .postJSON(provider: "signed", path: "/v1/chat/completions", body: Data("{\"n\":\(index)}".utf8))
                group.addTask { try await client.send(request).1.statusCode }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(statuses, Array(repeating: 200, count: 20))
        XCTAssertEqual(live.statuses(route: "proxy"), Array(repeating: 200, count: 20))
        XCTAssertEqual(live.provider.received.count, 20)
    }

    func testRetryAfterIsSurfacedOn429() async throws {
        let client = try live.client(attestation: live.attestation())
        let limited = ProviderRequest(provider: "limited", path: "/v1/models")
        _ = try await client.send(limited)
        _ = try await client.send(limited)
        do {
            _ = try await client.send(limited)
            XCTFail("the third call in a minute must be refused")
        } catch let error as KeywardError {
            guard case .refused(let refusal) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(refusal.code, .rateLimited)
            XCTAssertEqual(refusal.status, 429)
            let retryAfter = try XCTUnwrap(refusal.retryAfterSeconds)
            XCTAssertTrue((1...60).contains(retryAfter), "Retry-After \(retryAfter)")
            XCTAssertNotNil(refusal.requestID)
        }
        XCTAssertEqual(live.providerRequests("/v1/models"), 2)
    }

    func testAnUnsupportedDeviceThrowsAClearErrorAndNothingIsSent() async throws {
        let attestation = live.attestation()
        attestation.setSupported(false)
        let client = try live.client(attestation: attestation)
        do {
            _ = try await client.send(models)
            XCTFail("an unsupported device cannot get a session")
        } catch let error as KeywardError {
            XCTAssertEqual(error, .unsupportedDevice)
        }
        XCTAssertEqual(live.statuses(route: "challenge"), [])
    }

    func testKeywardsOwnRefusalsCarryTheirCodeAndNotFoundIsThrown() async throws {
        let client = try live.client(attestation: live.attestation())
        do {
            _ = try await client.send(ProviderRequest(provider: "chat", path: "/v1/not-allowed"))
            XCTFail("a path off the allowlist must be refused")
        } catch let error as KeywardError {
            XCTAssertEqual(error.code, .forbidden)
        }
        do {
            _ = try await client.send(ProviderRequest(provider: "nobody", path: "/v1/models"))
            XCTFail("an unknown provider must be refused")
        } catch let error as KeywardError {
            XCTAssertEqual(error.code, .notFound)
        }
    }
}
