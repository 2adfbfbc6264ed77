import DeviceSimulator
import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Sessions
import Store
import XCTest

/// A Keyward on loopback with a fake provider, a simulated iPhone, and helpers for the handshake.
final class TestDeployment: Sendable {
    static let providerKey = "sk-test-" + Hex.encode(SecureRandom.bytes(16))
    static let queryKey = "qk-test-" + Hex.encode(SecureRandom.bytes(16))

    let provider: FakeProvider
    let deployment: LocalDeployment
    let client: DemoClient

    /// - Parameters:
    ///   - extraProviders: more provider tables appended to the default `[chat]` one.
    ///   - chatOptions: extra lines inside `[chat]` (rate limits, require_assertion…).
    ///   - shards: the public listener's event loops, as `serve` runs them (see `Shard`).
    init(
        chatOptions: String = "",
        extraProviders: (UInt16) -> String = { _ in "" },
        time: any TimeSource = SystemTimeSource(),
        eventCount: Int = 3,
        eventGapMillis: Int = 300,
        wrapStore: (any Store) -> any Store = { $0 },
        settings adjust: @escaping (inout ServiceSettings) -> Void = { _ in },
        shards: Int = 2,
        store: String? = nil,
        sessionKeys: (@Sendable () throws -> SessionKeySet)? = nil,
        anchor: TestTrustAnchor? = nil,
        deviceCheck: DeviceCheckClient? = nil,
        receiptRoot: X509Certificate? = nil
    ) throws {
        provider = FakeProvider(expectedAuthorization: "Bearer " + TestDeployment.providerKey, eventCount: eventCount, eventGapMillis: eventGapMillis)
        try provider.start()
        let toml = TestDeployment.chatProvider(port: provider.port, options: chatOptions) + "\n" + extraProviders(provider.port)
        deployment = try LocalDeployment(
            providersTOML: toml,
            secrets: ["CHAT_KEY": TestDeployment.providerKey, "QUERY_KEY": TestDeployment.queryKey],
            settings: { settings in
                settings.handshakeBurst = 10_000
                settings.handshakeRatePerSecond = 10_000
                adjust(&settings)
            },
            time: time, store: store, wrapStore: wrapStore, shards: shards, sessionKeys: sessionKeys, anchor: anchor, deviceCheck: deviceCheck,
            receiptRoot: receiptRoot)
        client = DemoClient(baseURL: deployment.baseURL, client: deployment.upstream)
    }

    static func chatProvider(port: UInt16, options: String) -> String {
        """
        [chat]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "CHAT_KEY"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [
          { method = "POST", path = "/v1/chat/completions" },
          { method = "GET", path = "/v1/models" },
          { method = "GET", path = "/v1/files/*" },
        ]
        \(options)
        """
    }

    /// A `providers.toml` table for a plain-http provider on loopback, key `CHAT_KEY` as a bearer
    /// header, allowing each (method, path); `extra` lines go inside the table.
    static func loopbackProvider(_ name: String, port: UInt16, allow: [(String, String)], extra: String = "") -> String {
        let rules = allow.map { "{ method = \"\($0.0)\", path = \"\($0.1)\" }" }.joined(separator: ", ")
        return """
            [\(name)]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ \(rules) ]
            \(extra)

            """
    }

    func shutdown() {
        deployment.shutdown()
        provider.stop()
    }

    // MARK: handshake helpers

    func challenge() throws -> [UInt8] {
        let (response, json) = try client.postJSON("/v1/challenge", [:])
        XCTAssertEqual(response.status, 200)
        return try XCTUnwrap(Base64.decode(try XCTUnwrap(json["challenge"] as? String)))
    }

    /// Attests `device` over a fresh challenge; returns the HTTP status and the parsed body.
    func attest(_ device: SimulatedAppleDevice, challenge given: [UInt8]? = nil) throws -> (Int, [String: Any]) {
        let challenge = try given ?? self.challenge()
        let attestation = try device.attestation(clientDataHash: SHA256.hash(challenge), at: deployment.time.nowSeconds())
        let (response, json) = try client.postJSON(
            "/v1/attest/ios",
            ["key_id": Base64.encode(device.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(challenge)])
        return (response.status, json)
    }

    /// Sends `assertion` (or a fresh one) for `device` over `challenge` (or a fresh one).
    func assert(_ device: SimulatedAppleDevice, challenge given: [UInt8]? = nil, assertion givenAssertion: [UInt8]? = nil) throws -> (Int, [String: Any]) {
        let challenge = try given ?? self.challenge()
        let assertion = try givenAssertion ?? device.assertion(clientDataHash: SHA256.hash(challenge))
        let (response, json) = try client.postJSON(
            "/v1/assert/ios",
            ["key_id": Base64.encode(device.keyID), "assertion": Base64.encode(assertion), "challenge": Base64.encodeURL(challenge)])
        return (response.status, json)
    }

    /// A fresh device with a session: (device, token).
    func session() throws -> (SimulatedAppleDevice, String) {
        let device = try deployment.makeDevice()
        let (status, json) = try attest(device)
        XCTAssertEqual(status, 200, "attest: \(json)")
        return (device, try XCTUnwrap(json["token"] as? String))
    }

    func bearer(_ token: String) -> (String, String) { ("Authorization", "Bearer " + token) }

    /// Every log line so far.
    var logLines: [String] { deployment.logSink.lines }

    /// The reason slug of the last request line of `route`.
    func lastReason(route: String) -> String? {
        for line in logLines.reversed() where line.contains("\"route\":\"\(route)\"") {
            guard let data = line.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
            return object["reason"] as? String
        }
        return nil
    }
}

/// The `error` code of a JSON error body.
func errorCode(_ body: [UInt8]) -> String? {
    (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["error"] as? String
}
