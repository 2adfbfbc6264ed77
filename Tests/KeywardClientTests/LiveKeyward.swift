import DeviceSimulator
import Foundation
import HTTPServer
import Keyward
import KeywardClient
import KeywardCrypto
import KeywardDemo
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Keyward on loopback for the SDK's tests: the demo deployment (SQLite store, test App Attest
/// anchor, generated session key) in front of the demo's fake provider and a paced event source,
/// with its clock pinned. The only file of this target that names server modules.
final class LiveKeyward: Sendable {
    static let providerKey = "sk-client-" + Hex.encode(SecureRandom.bytes(12))

    /// The server's clock; clients made by `client(…)` read it too (plus their own offset).
    let clock = ManualTimeSource(seconds: Int64(Date().timeIntervalSince1970))
    let provider: FakeProvider
    let pacedEvents: PacedEventProvider
    let deployment: LocalDeployment

    /// - Parameter sessionTTLSeconds: the server's session lifetime.
    init(sessionTTLSeconds: Int64 = 3600) throws {
        provider = FakeProvider(expectedAuthorization: "Bearer " + LiveKeyward.providerKey, eventCount: 2, eventGapMillis: 10)
        try provider.start()
        pacedEvents = try PacedEventProvider()
        let port = provider.port
        let toml = """
            [chat]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [{ method = "GET", path = "/v1/models" }, { method = "POST", path = "/v1/chat/completions" }]

            # The fake provider expects CHAT_KEY: with another key it answers 401 itself.
            [wrongkey]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "WRONG_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [{ method = "GET", path = "/v1/models" }]

            [limited]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [{ method = "GET", path = "/v1/models" }]
            rate_limit = { per_minute = 2 }

            [signed]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [{ method = "GET", path = "/v1/models" }, { method = "POST", path = "/v1/chat/completions" }]
            require_assertion = true

            [paced]
            base_url = "http://127.0.0.1:\(pacedEvents.port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [{ method = "POST", path = "/v1/events" }]
            """
        deployment = try LocalDeployment(
            providersTOML: toml,
            secrets: ["CHAT_KEY": LiveKeyward.providerKey, "WRONG_KEY": "sk-not-the-one"],
            settings: { settings in
                settings.handshakeBurst = 10_000
                settings.handshakeRatePerSecond = 10_000
                settings.revocationCheckSeconds = 0
                settings.sessionTTLSeconds = sessionTTLSeconds
            },
            time: clock)
    }

    func shutdown() {
        deployment.shutdown()
        provider.stop()
        pacedEvents.stop()
    }

    /// A client of this deployment whose clock is the server's plus `offsetSeconds` (read each time).
    func client(
        attestation: SimulatedAttestation, keyStore: any KeyIDStore = InMemoryKeyIDStore(),
        assertedProviders: Set<String> = [], clockOffset: ClockOffset = ClockOffset()
    ) throws -> KeywardClient {
        let clock = self.clock
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        return KeywardClient(
            configuration: .init(
                baseURL: try requireURL(deployment.baseURL), assertedProviders: assertedProviders,
                clock: { Date(timeIntervalSince1970: Double(clock.nowMillis()) / 1000 + Double(clockOffset.seconds)) }),
            attestation: attestation, keyStore: keyStore, sessionConfiguration: configuration)
    }

    /// A simulated attestation service whose devices chain to this deployment's test anchor.
    func attestation() -> SimulatedAttestation {
        let deployment = self.deployment
        return SimulatedAttestation(now: { deployment.time.nowSeconds() }, makeDevice: { try deployment.makeDevice() })
    }

    /// Moves the server's clock (and the clients' with it) by `seconds`.
    func advance(seconds: Int64) { clock.set(millis: clock.nowMillis() + seconds * 1000) }

    /// The statuses Keyward logged for `route` (`challenge`, `attest_ios`, `assert_ios`, `proxy`), in order.
    func statuses(route: String) -> [Int] {
        deployment.logSink.lines.compactMap { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                  object["route"] as? String == route
            else { return nil }
            return object["status"] as? Int
        }
    }

    /// How many requests the fake provider received for `target` prefix.
    func providerRequests(_ target: String) -> Int { provider.received.filter { $0.target.hasPrefix(target) }.count }

    /// Revokes the device that attested `keyID` (standard base64).
    func revoke(keyID: String) throws {
        let bytes = try requireBytes(Base64.decode(keyID))
        _ = try deployment.store.setRevoked(deviceID: Hex.encode(bytes), true, now: clock.nowSeconds())
    }
}

/// A clock offset a test can change while clients run (the device's clock drifting from the server's).
final class ClockOffset: Sendable {
    private let value = Atomic<Int64>(0)
    init() {}
    var seconds: Int64 { value.load(ordering: .relaxed) }
    func set(_ seconds: Int64) { value.store(seconds, ordering: .relaxed) }
}

/// The App Attest simulator behind the SDK's protocol: each generated key is a `SimulatedAppleDevice`.
final class SimulatedAttestation: AppAttestationService, Sendable {
    private let devices = Mutex<[String: SimulatedAppleDevice]>([:])
    private let supported = Atomic<Bool>(true)
    private let generated = Atomic<Int>(0)
    private let now: @Sendable () -> Int64
    private let makeDevice: @Sendable () throws -> SimulatedAppleDevice

    init(now: @escaping @Sendable () -> Int64, makeDevice: @escaping @Sendable () throws -> SimulatedAppleDevice) {
        self.now = now
        self.makeDevice = makeDevice
    }

    var isSupported: Bool { supported.load(ordering: .relaxed) }
    /// How many keys `generateKey` made.
    var keysGenerated: Int { generated.load(ordering: .relaxed) }
    func setSupported(_ value: Bool) { supported.store(value, ordering: .relaxed) }

    /// Drops a key, as when the app's data is restored onto another device: the platform then
    /// answers `invalidKey` for it.
    func forget(_ keyID: String) { _ = devices.withLock { $0.removeValue(forKey: keyID) } }

    func generateKey() async throws -> String {
        let device = try makeDevice()
        let keyID = Base64.encode(device.keyID)
        devices.withLock { $0[keyID] = device }
        generated.add(1, ordering: .relaxed)
        return keyID
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        guard let device = devices.withLock({ $0[keyID] }) else { throw AttestationServiceError.invalidKey }
        return Data(try device.attestation(clientDataHash: Array(clientDataHash), at: now()))
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        guard let device = devices.withLock({ $0[keyID] }) else { throw AttestationServiceError.invalidKey }
        return Data(try device.assertion(clientDataHash: Array(clientDataHash)))
    }
}

/// A provider that writes one event, then the second only once the test says the first arrived
/// (or after 10 s, so a client that buffers sees both at once and the test fails instead of hanging).
final class PacedEventProvider: Sendable {
    private let server: HTTPServer
    private let firstArrived = DispatchSemaphore(value: 0)
    private let secondWrittenFlag = SharedFlag()

    init() throws {
        let firstArrived = self.firstArrived
        let secondWrittenFlag = self.secondWrittenFlag
        server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
            bodyLimit: { _ in 1 << 16 },
            handler: { _, _, writer in
                let stream = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
                _ = stream.write(Array("event: delta\ndata: 1\n\n".utf8))
                DispatchQueue.global().async {
                    _ = firstArrived.wait(timeout: .now() + 10)
                    secondWrittenFlag.value.store(true, ordering: .relaxed)
                    _ = stream.write(Array("data: 2\ndata: 2b\n\n".utf8))
                    stream.finish()
                }
            })
        try server.start()
    }

    var port: UInt16 { server.port }
    /// Whether event 2 has been written yet.
    var secondWritten: Bool { secondWrittenFlag.value.load(ordering: .relaxed) }
    /// Lets the provider write event 2.
    func releaseSecond() { firstArrived.signal() }
    func stop() { server.stop() }
}

/// A flag shared with the server's handler threads.
final class SharedFlag: Sendable {
    let value = Atomic<Bool>(false)
}

struct MissingValue: Error {}

func requireURL(_ text: String) throws -> URL {
    guard let url = URL(string: text) else { throw MissingValue() }
    return url
}

func requireBytes(_ bytes: [UInt8]?) throws -> [UInt8] {
    guard let bytes else { throw MissingValue() }
    return bytes
}
