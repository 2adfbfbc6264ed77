import DeviceSimulator
import Foundation
import HTTPServer
@testable import Keyward
import KeywardDemo
import KeywardCrypto
import PlayIntegrity
import ProviderRegistry
import Sessions
import Store
import Synchronization
import Upstream
import TestWaiting
import XCTest

/// The Android handshake over loopback HTTP, both modes: challenge → /v1/attest/android → session → a proxied call,
/// and every refusal answered with its one opaque code while the log keeps the reason slug.
/// Keyward, a fake provider and a fake Google (standard mode) each listen on 127.0.0.1.
final class AndroidEndToEndTests: XCTestCase {
    static let package = "dev.keyward.demo"
    static let providerKey = "sk-android-" + Hex.encode(SecureRandom.bytes(8))
    static let certificate = SHA256.hash(Array("android e2e signing certificate".utf8))
    nonisolated(unsafe) static var sharedAccount: SimulatedServiceAccount?

    /// One Keyward deployment with Android in `mode`.
    final class Harness {
        let time: ManualTimeSource
        let provider: FakeProvider
        let google: FakeGooglePlayIntegrity
        let googleServer: HTTPServer
        let account: SimulatedServiceAccount
        let keys: IntegrityTestKeys
        let store: any Store
        let server: KeywardServer
        let upstream: UpstreamClient
        let client: DemoClient
        let logSink: MemoryLogSink
        let directory: String
        let metrics = Metrics()
        /// False when the fake Google belongs to another harness (which stops it).
        let ownsGoogle: Bool

        /// A fake Google on its own loopback listener: (fake, its server, its base URL).
        static func startGoogle(now: Int64) throws -> (FakeGooglePlayIntegrity, HTTPServer, String) {
            let holder = Mutex<FakeGooglePlayIntegrity?>(nil)
            let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1), bodyLimit: { _ in 64 * 1024 }) { head, body, writer in
                guard let fake = holder.withLock({ $0 }) else { return writer.respond(status: 503) }
                let answer = fake.handle(method: head.method, path: head.path, headers: head.headers, body: body)
                writer.respond(status: answer.status, headers: answer.headers, body: answer.body)
            }
            try server.start()
            let base = "http://127.0.0.1:\(server.port)"
            let fake = FakeGooglePlayIntegrity(baseURL: base, now: now)
            holder.withLock { $0 = fake }
            return (fake, server, base)
        }

        /// - Parameters:
        ///   - adjust: changes to the `[android]` settings (budgets, credential lifetime).
        ///   - storeURL: the store to use; a fresh SQLite file in the harness's folder when nil.
        ///   - google: a fake Google already listening (several instances sharing one Google); a new one when nil.
        ///   - gateMode: `[gate] mode`.
        init(mode: IntegrityMode, account: SimulatedServiceAccount, budget: Int = 30,
             adjust: (inout AndroidSettings) -> Void = { _ in }, storeURL: String? = nil,
             google shared: (fake: FakeGooglePlayIntegrity, server: HTTPServer, base: String)? = nil,
             gateMode: GateMode = .enforce) throws {
            time = ManualTimeSource(millis: SystemTimeSource().nowMillis())
            directory = FileManager.default.temporaryDirectory.path + "/keyward-android-" + Hex.encode(SecureRandom.bytes(6))
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            provider = FakeProvider(expectedAuthorization: "Bearer " + AndroidEndToEndTests.providerKey, eventCount: 1, eventGapMillis: 0)
            try provider.start()

            let googleBase: String
            if let shared {
                (google, googleServer, googleBase) = shared
                ownsGoogle = false
            } else {
                (google, googleServer, googleBase) = try Harness.startGoogle(now: time.nowSeconds())
                ownsGoogle = true
            }
            self.account = account
            google.trust(account)
            keys = try IntegrityTestKeys.generate()

            let providersPath = directory + "/providers.toml"
            try TestDeployment.chatProvider(port: provider.port, options: "").replacingOccurrences(of: "CHAT_KEY", with: "ANDROID_CHAT_KEY")
                .write(toFile: providersPath, atomically: true, encoding: .utf8)
            let secrets = SecretSource(environment: ["ANDROID_CHAT_KEY": AndroidEndToEndTests.providerKey])
            let table = ProviderTable(try ProviderTable.resolve(try ProviderRegistry.load(path: providersPath), secrets: secrets))
            store = try openStore(url: storeURL ?? "sqlite://\(directory)/keyward.db")
            try store.migrate()
            let sessionKey = try ECPrivateKey.generate(.p256)
            let sessionKeys = try SessionKeySet(active: (kid: SessionKeySet.thumbprintKID(for: sessionKey.publicKey), key: sessionKey), verifyOnly: [])

            let keyFile = try account.keyFile(tokenURI: google.tokenURL)
            let androidSecrets: AndroidSecrets = mode == .standard
                ? .standard(serviceAccount: { keyFile })
                : .classic(decryptionKeyBase64: keys.decryptionKeyBase64, verificationKeyBase64: keys.verificationKeyBase64)
            var settings = AndroidSettings(
                packageNames: [AndroidEndToEndTests.package], certificateDigests: [AndroidEndToEndTests.certificate], mode: mode,
                decodeBudgetPerDay: budget, google: GoogleEndpoints(playIntegrityBaseURL: googleBase, tokenURL: nil))
            adjust(&settings)
            upstream = UpstreamClient()
            let android = AndroidHandshake(attestation: try AndroidAttestation(
                settings: settings, secrets: androidSecrets, http: UpstreamGoogleHTTPClient(upstream: upstream)))

            var serviceSettings = ServiceSettings()
            serviceSettings.handshakeBurst = 10_000
            serviceSettings.handshakeRatePerSecond = 10_000
            serviceSettings.gateMode = gateMode
            logSink = MemoryLogSink()
            let service = try KeywardService(
                settings: serviceSettings, store: store, sessionKeys: sessionKeys, providers: table, upstream: upstream, time: time,
                logger: Logger(sink: logSink, time: time), metrics: metrics, android: android)
            // Sharded, as `serve` runs: standard-mode answers come back from another thread and
            // must wake their shard's loop.
            server = KeywardServer(
                service: service, publicListener: HTTPServerConfiguration(host: "127.0.0.1", port: 0), adminListener: nil,
                shards: 2)
            try server.start()
            client = DemoClient(baseURL: "http://127.0.0.1:\(server.port)", client: upstream)
        }

        func shutdown() {
            server.stop()
            if ownsGoogle { googleServer.stop() }
            upstream.shutdown()
            provider.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func challenge() throws -> [UInt8] {
            let (response, json) = try client.postJSON("/v1/challenge", [:])
            XCTAssertEqual(response.status, 200)
            return try XCTUnwrap(Base64.decode(try XCTUnwrap(json["challenge"] as? String)))
        }

        /// The verdict Google would give this install for `challenge`, made at Keyward's current time.
        func verdict(_ mode: IntegrityMode, challenge: [UInt8], installID: String) -> AndroidIntegrityVerdict {
            AndroidIntegrityVerdict(request: mode == .standard ? .standard : .classic, packageName: AndroidEndToEndTests.package,
                                    challenge: challenge, installID: installID, timestampMillis: time.nowMillis() - 1_500,
                                    certificateDigest: AndroidEndToEndTests.certificate)
        }

        func token(_ mode: IntegrityMode, _ verdict: AndroidIntegrityVerdict) throws -> String {
            mode == .standard ? google.issueStandardToken(verdict) : try keys.classicToken(verdict)
        }

        func attest(token: String, challenge: [UInt8], installID: String) throws -> (UpstreamResponse, [String: Any]) {
            try client.postJSON("/v1/attest/android", ["integrity_token": token, "challenge": Base64.encodeURL(challenge), "install_id": installID])
        }

        /// A full standard or classic handshake for a fresh install: (the answer's status, its body).
        func handshake(_ mode: IntegrityMode, installID: String = UUID().uuidString.lowercased()) throws -> (Int, [String: Any]) {
            let challenge = try self.challenge()
            let (response, json) = try attest(token: try token(mode, verdict(mode, challenge: challenge, installID: installID)),
                                              challenge: challenge, installID: installID)
            return (response.status, json)
        }

        /// `POST /v1/refresh` with `credential`.
        func refresh(_ credential: String) throws -> (UpstreamResponse, [String: Any]) {
            try client.postJSON("/v1/refresh", ["install_credential": credential])
        }

        /// Every log line so far, parsed.
        func logObjects() -> [[String: Any]] {
            logSink.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }

        /// The `/v1/attest/android` log lines so far, parsed.
        func attestLines() -> [[String: Any]] {
            logSink.lines.filter { $0.contains("\"route\":\"attest_android\"") }.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        /// The reason slug of the `/v1/attest/android` log line number `index` (0-based), waiting up to a
        /// second for it: the server logs after the response has gone out.
        func reason(ofLine index: Int) -> String? {
            var lines: [[String: Any]] = []
            guard waitUntil(timeout: 1, pollMillis: 10, { lines = attestLines(); return lines.count > index }) else { return nil }
            return lines[index]["reason"] as? String
        }
    }

    var harness: Harness?

    override func tearDown() { harness?.shutdown() }

    func start(_ mode: IntegrityMode, budget: Int = 30) throws -> Harness {
        if Self.sharedAccount == nil { Self.sharedAccount = try SimulatedServiceAccount.generate() }
        let made = try Harness(mode: mode, account: try XCTUnwrap(Self.sharedAccount), budget: budget)
        harness = made
        return made
    }

    // MARK: the happy path, both modes

    func testClassicChallengeAttestSessionProxiedCall() throws { try happyPath(.classic) }

    func testStandardChallengeAttestSessionProxiedCall() throws {
        let env = try happyPath(.standard)
        XCTAssertEqual(env.google.decodeCount, 1)
        XCTAssertEqual(env.google.tokenRequestCount, 1)
    }

    @discardableResult
    func happyPath(_ mode: IntegrityMode) throws -> Harness {
        let env = try start(mode)
        let installID = UUID().uuidString.lowercased()
        let challenge = try env.challenge()
        let token = try env.token(mode, env.verdict(mode, challenge: challenge, installID: installID))
        let started = Date()
        let (response, json) = try env.attest(token: token, challenge: challenge, installID: installID)
        XCTAssertEqual(response.status, 200, "\(json) \(env.reason(ofLine: 0) ?? "")")
        // Standard mode answers from another thread: a shard's loop that missed the wake-up would
        // answer only at its next turn, up to a second later.
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.9)
        let session = try XCTUnwrap(json["token"] as? String)
        let claims = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(Base64.decode(String(session.split(separator: ".")[1]))))) as? [String: Any])
        let deviceID = Hex.encode(SHA256.hash(Array((Self.package + installID).utf8)))
        XCTAssertEqual(claims["sub"] as? String, deviceID)
        XCTAssertEqual(claims["plat"] as? String, "android")
        XCTAssertEqual(try env.store.device(id: deviceID)?.platform, "android")

        let proxied = try env.client.call("GET", "/p/chat/v1/models", headers: [("Authorization", "Bearer " + session)])
        XCTAssertEqual(proxied.status, 200)
        XCTAssertEqual(env.provider.received.last?.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer " + Self.providerKey)
        return env
    }

    // MARK: refusals

    func assertRefused(_ env: Harness, token: String, challenge: [UInt8], installID: String, status: Int, code: String, reason: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let index = env.attestLines().count
        let (response, json) = try env.attest(token: token, challenge: challenge, installID: installID)
        XCTAssertEqual(response.status, status, file: file, line: line)
        XCTAssertEqual(json as? [String: String], ["error": code], "one opaque code, nothing else", file: file, line: line)
        XCTAssertEqual(env.reason(ofLine: index), reason, file: file, line: line)
    }

    func testClassicRefusalsOverHTTP() throws {
        let env = try start(.classic)
        let installID = UUID().uuidString.lowercased()
        let other = try IntegrityTestKeys.generate()

        var challenge = try env.challenge()
        let good = try env.token(.classic, env.verdict(.classic, challenge: challenge, installID: installID))
        XCTAssertEqual(try env.attest(token: good, challenge: challenge, installID: installID).0.status, 200)
        try assertRefused(env, token: good, challenge: challenge, installID: installID, status: 400, code: "challenge_invalid", reason: "challenge_unknown_or_spent")

        challenge = try env.challenge()
        try assertRefused(env, token: try env.token(.classic, env.verdict(.classic, challenge: challenge, installID: UUID().uuidString.lowercased())),
                          challenge: challenge, installID: installID, status: 401, code: "attestation_invalid", reason: "binding_mismatch")
        challenge = try env.challenge()
        var stale = env.verdict(.classic, challenge: challenge, installID: installID)
        stale.timestampMillis = env.time.nowMillis() - 121_000
        try assertRefused(env, token: try env.token(.classic, stale), challenge: challenge, installID: installID,
                          status: 401, code: "attestation_invalid", reason: "timestamp_stale")
        challenge = try env.challenge()
        try assertRefused(env, token: try IntegrityTestKeys(decryptionKey: other.decryptionKey, signingKey: env.keys.signingKey)
                            .classicToken(env.verdict(.classic, challenge: challenge, installID: installID)),
                          challenge: challenge, installID: installID, status: 401, code: "attestation_invalid", reason: "jwe_key_unwrap_failed")
        challenge = try env.challenge()
        try assertRefused(env, token: try IntegrityTestKeys(decryptionKey: env.keys.decryptionKey, signingKey: other.signingKey)
                            .classicToken(env.verdict(.classic, challenge: challenge, installID: installID)),
                          challenge: challenge, installID: installID, status: 401, code: "attestation_invalid", reason: "jws_signature_invalid")
        challenge = try env.challenge()
        let unsigned = IntegrityJOSE.unsignedJWS(payload: env.verdict(.classic, challenge: challenge, installID: installID).json)
        try assertRefused(env, token: try IntegrityJOSE.encryptJWE(plaintext: Array(unsigned.utf8), kek: env.keys.decryptionKey),
                          challenge: challenge, installID: installID, status: 401, code: "attestation_invalid", reason: "jws_algorithm_unsupported")
        challenge = try env.challenge()
        try assertRefused(env, token: String(repeating: "A", count: 16 * 1024 + 1), challenge: challenge, installID: installID,
                          status: 400, code: "bad_request", reason: "integrity_token_too_large")
    }

    func testStandardGoogleFailuresOverHTTP() throws {
        let env = try start(.standard, budget: 2)
        let installID = UUID().uuidString.lowercased()

        // Google down: 502, no session.
        env.google.setDecodeOutage(503)
        var challenge = try env.challenge()
        try assertRefused(env, token: try env.token(.standard, env.verdict(.standard, challenge: challenge, installID: installID)),
                          challenge: challenge, installID: installID, status: 502, code: "upstream_error", reason: "google_server_error")
        env.google.setDecodeOutage(nil)

        // One unit left today: it works once, then the budget stops decodes.
        challenge = try env.challenge()
        XCTAssertEqual(try env.attest(token: try env.token(.standard, env.verdict(.standard, challenge: challenge, installID: installID)),
                                      challenge: challenge, installID: installID).0.status, 200)
        let decodes = env.google.decodeCount
        challenge = try env.challenge()
        let index = env.attestLines().count
        let (response, json) = try env.attest(token: try env.token(.standard, env.verdict(.standard, challenge: challenge, installID: installID)),
                                              challenge: challenge, installID: installID)
        XCTAssertEqual(response.status, 429)
        XCTAssertEqual(json as? [String: String], ["error": "rate_limited"])
        XCTAssertNotNil(response.header("retry-after"))
        XCTAssertEqual(env.reason(ofLine: index), "decode_budget_exhausted")
        XCTAssertEqual(env.google.decodeCount, decodes, "no decode once the budget is spent")
    }

    func testOAuthFailureSpendsNoDeviceBudget() throws {
        let env = try start(.standard, budget: 1)
        let installID = UUID().uuidString.lowercased()
        env.google.revokeKeys(of: env.account.clientEmail)
        var challenge = try env.challenge()
        try assertRefused(env, token: try env.token(.standard, env.verdict(.standard, challenge: challenge, installID: installID)),
                          challenge: challenge, installID: installID, status: 500, code: "internal_error", reason: "google_oauth_refused")
        XCTAssertEqual(env.google.decodeCount, 0)
        // Fixed a minute later: the device's one decode is still there.
        env.google.trust(env.account)
        env.time.set(millis: env.time.nowMillis() + 60_000)
        env.google.setNow(env.time.nowSeconds())
        challenge = try env.challenge()
        let (response, json) = try env.attest(token: try env.token(.standard, env.verdict(.standard, challenge: challenge, installID: installID)),
                                              challenge: challenge, installID: installID)
        XCTAssertEqual(response.status, 200, "\(json)")
    }
}

extension AndroidEndToEndTests {
    /// Each verdict rule, broken alone in a correctly signed classic token: 401
    /// `attestation_invalid` to the client, the rule's slug in the log.
    func testEveryVerdictRefusalIsOneOpaqueCodeOverHTTP() throws {
        let env = try start(.classic)
        let installID = UUID().uuidString.lowercased()
        let breakages: [(String, (inout AndroidIntegrityVerdict) -> Void)] = [
            ("timestamp_future", { $0.timestampMillis = env.time.nowMillis() + 11_000 }),
            ("app_package_mismatch", { $0.packageName = "com.attacker.repackaged" }),  // requestPackageName stays ours
            ("app_certificate_unknown", { $0.certificateDigests = [SHA256.hash(Array("another signer".utf8))] }),
            ("app_not_recognized", { $0.appRecognitionVerdict = "UNRECOGNIZED_VERSION" }),
            ("app_not_recognized", { $0.appRecognitionVerdict = "UNEVALUATED" }),
            ("device_verdict_empty", { $0.deviceRecognitionVerdict = [] }),
            ("account_details_missing", { $0.appLicensingVerdict = nil }),
        ]
        for (reason, breakIt) in breakages {
            let challenge = try env.challenge()
            var verdict = env.verdict(.classic, challenge: challenge, installID: installID)
            breakIt(&verdict)
            XCTAssertEqual(verdict.requestPackageName, Self.package)
            try assertRefused(env, token: try env.token(.classic, verdict), challenge: challenge, installID: installID,
                              status: 401, code: "attestation_invalid", reason: reason)
        }
    }
}
