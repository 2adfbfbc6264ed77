import DeviceSimulator
import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import ProviderRegistry
import XCTest

/// Providers with `require_assertion = true`: every request signed by the device's App Attest key
/// over METHOD, path?query, SHA-256 of the body and a timestamp.
final class RequestAssertionTests: XCTestCase {
    var env: TestDeployment!
    let clock = ManualTimeSource(seconds: 1_900_000_000)

    override func setUpWithError() throws {
        env = try TestDeployment(extraProviders: { port in
            TestDeployment.loopbackProvider(
                "signed", port: port, allow: [("POST", "/v1/chat/completions"), ("GET", "/v1/models")], extra: "require_assertion = true")
                + TestDeployment.loopbackProvider(
                    "signedlimited", port: port, allow: [("GET", "/v1/models")],
                    extra: "require_assertion = true\nrate_limit = { per_minute = 5 }")
        }, time: clock)
    }

    override func tearDown() { env?.shutdown() }

    /// The headers a genuine app would send for this request.
    func signedHeaders(_ device: SimulatedAppleDevice, token: String, method: String, path: String, query: String?, body: [UInt8],
                       timestamp: Int64? = nil) throws -> [(String, String)] {
        let stamp = String(timestamp ?? clock.nowSeconds())
        let clientData = AssertionClientData.bytes(method: method, path: path, query: query, bodySHA256: SHA256.hash(body), timestamp: stamp)
        let assertion = try device.assertion(clientDataHash: SHA256.hash(clientData))
        return [env.bearer(token), ("X-Keyward-Timestamp", stamp), ("X-Keyward-Assertion", Base64.encode(assertion))]
    }

    func testSignedRequestPassesAndItsHeadersStayHere() throws {
        let (device, token) = try env.session()
        let body = Array("{\"q\":1}".utf8)
        let headers = try signedHeaders(device, token: token, method: "POST", path: "/p/signed/v1/chat/completions", query: "a=1&b=2", body: body)
        let response = try env.client.call("POST", "/p/signed/v1/chat/completions?a=1&b=2", headers: headers, body: body)
        XCTAssertEqual(response.status, 200)
        let received = try XCTUnwrap(env.provider.received.last)
        XCTAssertFalse(received.headers.contains { $0.name.lowercased().hasPrefix("x-keyward-") })
        XCTAssertEqual(try env.deployment.store.device(id: Hex.encode(device.keyID))?.counter, 1)
    }

    func testReplayedSignatureAlteredBodyAndStaleTimestampAreRefused() throws {
        let (device, token) = try env.session()
        let body = Array("{\"q\":1}".utf8)
        let headers = try signedHeaders(device, token: token, method: "POST", path: "/p/signed/v1/chat/completions", query: nil, body: body)
        XCTAssertEqual(try env.client.call("POST", "/p/signed/v1/chat/completions", headers: headers, body: body).status, 200)

        let replay = try env.client.call("POST", "/p/signed/v1/chat/completions", headers: headers, body: body)
        XCTAssertEqual(replay.status, 401)
        XCTAssertEqual(errorCode(replay.body), "attestation_invalid")
        XCTAssertEqual(env.lastReason(route: "proxy"), "counter_replay")

        let fresh = try signedHeaders(device, token: token, method: "POST", path: "/p/signed/v1/chat/completions", query: nil, body: body)
        let altered = try env.client.call("POST", "/p/signed/v1/chat/completions", headers: fresh, body: Array("{\"q\":2}".utf8))
        XCTAssertEqual(altered.status, 401)

        let stale = try signedHeaders(device, token: token, method: "POST", path: "/p/signed/v1/chat/completions", query: nil, body: body,
                                      timestamp: clock.nowSeconds() - 61)
        XCTAssertEqual(try env.client.call("POST", "/p/signed/v1/chat/completions", headers: stale, body: body).status, 401)
        XCTAssertEqual(env.lastReason(route: "proxy"), "assertion_timestamp_skew")

        let unsigned = try env.client.call("GET", "/p/signed/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(unsigned.status, 401)
        XCTAssertEqual(env.provider.received.count, 1, "only the one genuine request reached the provider")
    }

    func testTwoHundredConcurrentCopiesOfOneSignedRequestPassOnce() throws {
        let (device, token) = try env.session()
        let headers = try signedHeaders(device, token: token, method: "GET", path: "/p/signed/v1/models", query: nil, body: [])
        let statuses = ConcurrentResults<Int>()
        let env = self.env!
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            statuses.append((try? env.client.call("GET", "/p/signed/v1/models", headers: headers))?.status ?? -1)
        }
        XCTAssertEqual(statuses.values.filter { $0 == 200 }.count, 1)
        XCTAssertEqual(statuses.values.filter { $0 == 401 }.count, 199)
        XCTAssertEqual(env.provider.received.count, 1)
    }

    /// A copied session token with junk assertions must not spend the device's quota: the
    /// assertion is verified before a rate unit is taken.
    func testJunkAssertionsSpendNoRateUnits() throws {
        let (device, token) = try env.session()
        let stamp = String(clock.nowSeconds())
        let junk = [env.bearer(token), ("X-Keyward-Timestamp", stamp), ("X-Keyward-Assertion", Base64.encode(Array(repeating: 7, count: 80)))]
        for _ in 0..<6 {
            let response = try env.client.call("GET", "/p/signedlimited/v1/models", headers: junk)
            XCTAssertEqual(response.status, 401)
            XCTAssertEqual(errorCode(response.body), "attestation_invalid")
        }
        let headers = try signedHeaders(device, token: token, method: "GET", path: "/p/signedlimited/v1/models", query: nil, body: [])
        XCTAssertEqual(try env.client.call("GET", "/p/signedlimited/v1/models", headers: headers).status, 200)
        XCTAssertEqual(env.provider.received.count, 1)
    }

    func testAndroidSessionIsForbiddenOnAnAssertionProvider() throws {
        // An Android device (platform android, no key) with a valid session.
        let deviceID = String(repeating: "ab", count: 32)
        _ = try env.deployment.store.registerDevice(.init(
            id: deviceID, platform: "android", publicKey: [], counter: 0, environment: "standard",
            createdAt: clock.nowSeconds(), lastSeenAt: clock.nowSeconds()))
        let token = try env.deployment.mintSession(deviceID: deviceID, platform: .android)
        let response = try env.client.call("GET", "/p/signed/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(errorCode(response.body), "forbidden")
        // The same session works where no assertion is required.
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
    }
}
