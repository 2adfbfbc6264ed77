import DeviceSimulator
import Foundation
import HTTPServer
@testable import Keyward
import KeywardCrypto
import KeywardDemo
import Store
import Synchronization
import TestWaiting
import Upstream
import XCTest

/// DeviceCheck anti-farming against a fake Apple DeviceCheck server on loopback: every call's JWT
/// checked (header, claims, ES256 signature with the key's public half), bit 0 set when a device
/// exhausts its daily allowance, a new key on that phone (same device token) flagged or refused,
/// Apple down or slow → fail open and counted, DeviceCheck off → no look-up and no count.
final class DeviceCheckTests: XCTestCase {
    static let teamID = LocalDeployment.teamID
    static let keyID = "DCKEY12345"

    /// Apple's two DeviceCheck endpoints, with the bits kept per device token.
    final class FakeAppleDeviceCheck: Sendable {
        struct Call: Sendable {
            let path: String
            let jwtValid: Bool
            let deviceToken: String?
        }
        private struct State {
            var bits: [String: (Bool, Bool)] = [:]
            var calls: [Call] = []
            var delaySeconds: Double = 0
        }
        private let state = Mutex(State())
        let publicKey: ECPublicKey
        let now: @Sendable () -> Int64

        init(publicKey: ECPublicKey, now: @escaping @Sendable () -> Int64) {
            self.publicKey = publicKey
            self.now = now
        }

        var calls: [Call] { state.withLock { $0.calls } }
        func bits(_ token: [UInt8]) -> (Bool, Bool)? { state.withLock { $0.bits[Base64.encode(token)] } }
        func setBits(_ token: [UInt8], _ bits: (Bool, Bool)) { state.withLock { $0.bits[Base64.encode(token)] = bits } }
        func setDelay(_ seconds: Double) { state.withLock { $0.delaySeconds = seconds } }

        /// RFC 7515 compact JWS: header `alg` ES256 and `kid`, claims `iss` (team) and a recent `iat`, the signature r ‖ s.
        func jwtValid(_ authorization: String?) -> Bool {
            guard let authorization, authorization.hasPrefix("Bearer ") else { return false }
            let parts = authorization.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let headerBytes = Base64.decode(parts[0]), let claimBytes = Base64.decode(parts[1]),
                  let signature = Base64.decode(parts[2]),
                  let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
                  let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any],
                  header["alg"] as? String == "ES256", header["kid"] as? String == DeviceCheckTests.keyID,
                  claims["iss"] as? String == DeviceCheckTests.teamID,
                  let iat = (claims["iat"] as? NSNumber)?.int64Value, abs(iat - now()) <= 60
            else { return false }
            return publicKey.isValidSignature(raw: signature, message: Array((parts[0] + "." + parts[1]).utf8))
        }

        func handle(path: String, authorization: String?, body: [UInt8]) -> (Int, [UInt8]) {
            let delay = state.withLock { $0.delaySeconds }
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }   // a slow Apple: the pause is the behaviour under test
            let request = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
            let token = request?["device_token"] as? String
            let valid = jwtValid(authorization) && token != nil && request?["transaction_id"] is String && request?["timestamp"] is NSNumber
            state.withLock { $0.calls.append(Call(path: path, jwtValid: valid, deviceToken: token)) }
            guard valid, let token else { return (401, Array("Unable to verify authorization token".utf8)) }
            switch path {
            case "/v1/query_two_bits":
                guard let bits = state.withLock({ $0.bits[token] }) else { return (200, Array("Bit State Not Found".utf8)) }
                return (200, Array("{\"bit0\":\(bits.0),\"bit1\":\(bits.1),\"last_update_time\":\"2026-12\"}".utf8))
            case "/v1/update_two_bits":
                guard let bit0 = request?["bit0"] as? Bool, let bit1 = request?["bit1"] as? Bool else { return (400, Array("Missing bits".utf8)) }
                state.withLock { $0.bits[token] = (bit0, bit1) }
                return (200, [])
            default:
                return (404, [])
            }
        }
    }

    var env: TestDeployment?
    var apple: FakeAppleDeviceCheck?
    var appleServer: HTTPServer?
    var http: UpstreamClient?
    let clock = ManualTimeSource(seconds: 1_900_000_000)

    override func tearDown() {
        env?.shutdown()
        appleServer?.stop()
        http?.shutdown()
    }

    /// A Keyward with DeviceCheck pointed at a fake Apple (or, with `appleUp` false, at a port nothing listens on).
    func start(
        onFlagged: DeviceCheckSettings.OnFlagged = .flag, flaggedTier: String? = nil, timeoutMs: Int = 3_000, appleUp: Bool = true
    ) throws -> (TestDeployment, FakeAppleDeviceCheck) {
        let key = try ECPrivateKey.generate(.p256)
        let clock = self.clock
        let fake = FakeAppleDeviceCheck(publicKey: key.publicKey, now: { clock.nowSeconds() })
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 2), bodyLimit: { _ in 64 * 1024 }) { head, body, writer in
            let (status, answer) = fake.handle(path: head.path, authorization: head.header("authorization"), body: body)
            writer.respond(status: status, headers: [("Content-Type", "application/json")], body: answer)
        }
        try server.start()
        let port = server.port
        if !appleUp { server.stop() } else { appleServer = server }
        let http = UpstreamClient()
        self.http = http
        // The secret as an operator would give it: the .p8 file's PEM.
        let client = try XCTUnwrap(try ServiceAssembly.deviceCheck(
            configurationWithDeviceCheck(baseURL: "http://127.0.0.1:\(port)", onFlagged: onFlagged, flaggedTier: flaggedTier, timeoutMs: timeoutMs),
            secrets: SecretSource(environment: [DeviceCheckClient.secretName: key.pkcs8PEM]), upstream: http))
        let made = try TestDeployment(chatOptions: "rate_limit = { per_day = 2 }", time: clock, deviceCheck: client)
        env = made
        apple = fake
        return (made, fake)
    }

    func configurationWithDeviceCheck(
        baseURL: String, onFlagged: DeviceCheckSettings.OnFlagged, flaggedTier: String? = nil, timeoutMs: Int
    ) throws -> KeywardConfiguration {
        let tierLine = flaggedTier.map { "flagged_tier = \"\($0)\"\n[tiers.\($0)]\ninstall_daily_credits = 5" } ?? ""
        return try KeywardConfiguration.parse(text: """
            [apple]
            team_id = "\(Self.teamID)"
            bundle_ids = ["\(LocalDeployment.bundleID)"]
            environment = "development"
            [apple.devicecheck]
            key_id = "\(Self.keyID)"
            base_url = "\(baseURL)"
            timeout_ms = \(timeoutMs)
            on_flagged = "\(onFlagged.rawValue)"
            \(tierLine)
            """, path: "keyward.toml")
    }

    /// Attests `device` with `deviceToken` in the body.
    func attest(_ env: TestDeployment, _ device: SimulatedAppleDevice, deviceToken: [UInt8]?) throws -> (Int, [String: Any]) {
        let challenge = try env.challenge()
        let attestation = try device.attestation(clientDataHash: SHA256.hash(challenge), at: clock.nowSeconds())
        var fields = ["key_id": Base64.encode(device.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(challenge)]
        if let deviceToken { fields["device_check_token"] = Base64.encode(deviceToken) }
        let (response, json) = try env.client.postJSON("/v1/attest/ios", fields)
        return (response.status, json)
    }

    func testAJWTPerCallQueryAndUpdateAndAReinstallOnAnExhaustedPhoneStartsFlagged() throws {
        let (env, apple) = try start()
        let phone = SecureRandom.bytes(96)   // the phone's DeviceCheck token: the same for every install on it
        let first = try env.deployment.makeDevice()
        let (status, json) = try attest(env, first, deviceToken: phone)
        XCTAssertEqual(status, 200, "\(json)")
        let token = try XCTUnwrap(json["token"] as? String)
        XCTAssertEqual(apple.calls.map(\.path), ["/v1/query_two_bits"])
        XCTAssertEqual(try env.deployment.store.device(id: Hex.encode(first.keyID))?.flagged, false)

        // The free allowance: two calls a day; the third is refused, and bit 0 of the phone gets set.
        for _ in 0..<2 { XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200) }
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 429)
        XCTAssertTrue(waitUntil { apple.bits(phone)?.0 == true }, "bit 0 set at Apple")
        XCTAssertEqual(apple.bits(phone)?.1, false, "bit 1 kept as it was (never set)")
        XCTAssertTrue(waitUntil { env.deployment.service.metrics.value("keyward_devicecheck_total", ["outcome": "bit_set"]) == 1 })
        // A fourth refusal does not call Apple again.
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 429)

        // The reinstall: a new App Attest key on the same phone, a fresh allowance, but flagged.
        let reinstall = try env.deployment.makeDevice()
        let (again, againJSON) = try attest(env, reinstall, deviceToken: phone)
        XCTAssertEqual(again, 200, "\(againJSON)")
        let record = try XCTUnwrap(try env.deployment.store.device(id: Hex.encode(reinstall.keyID)))
        XCTAssertTrue(record.flagged, "starts flagged (the tier a later spend-control step maps it to)")
        XCTAssertEqual(record.deviceCheckToken, phone)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_devicecheck_total", ["outcome": "flagged"]), 1)

        // Every call carried a valid ES256 JWT (kid, iss = team, iat, signature) and the phone's token.
        let calls = apple.calls
        XCTAssertEqual(calls.map(\.path), ["/v1/query_two_bits", "/v1/query_two_bits", "/v1/update_two_bits", "/v1/query_two_bits"])
        XCTAssertTrue(calls.allSatisfy { $0.jwtValid && $0.deviceToken == Base64.encode(phone) })
        XCTAssertFalse(env.logLines.contains { $0.contains(Base64.encode(phone)) }, "the device token never reaches a log")
    }

    func testAForgedJWTIsWhatTheFakeRefuses() throws {
        // The fake's check can fail: a token signed by another key does not pass it.
        let (_, apple) = try start()
        let other = DeviceCheckClient(teamID: Self.teamID, settings: DeviceCheckSettings(keyID: Self.keyID), privateKey: try ECPrivateKey.generate(.p256),
                                      http: try XCTUnwrap(http))
        XCTAssertFalse(apple.jwtValid("Bearer " + (try other.authorization(now: clock.nowSeconds()))))
        let stale = DeviceCheckClient(teamID: Self.teamID, settings: DeviceCheckSettings(keyID: Self.keyID), privateKey: try ECPrivateKey.generate(.p256),
                                      http: try XCTUnwrap(http))
        XCTAssertFalse(apple.jwtValid("Bearer " + (try stale.authorization(now: clock.nowSeconds() - 3_600))))
        XCTAssertFalse(apple.jwtValid(nil))
    }

    func testANewKeyOnAFlaggedPhoneStartsInTheFlaggedTier() throws {
        let (env, apple) = try start(flaggedTier: "probation")
        let phone = SecureRandom.bytes(96)
        apple.setBits(phone, (true, false))   // bit 0: an earlier install on this phone exhausted its allowance
        let reinstall = try env.deployment.makeDevice()
        XCTAssertEqual(try attest(env, reinstall, deviceToken: phone).0, 200)
        let record = try XCTUnwrap(try env.deployment.store.device(id: Hex.encode(reinstall.keyID)))
        XCTAssertTrue(record.flagged)
        XCTAssertEqual(record.tier, "probation")
        // A clean phone starts in the default tier.
        let clean = try env.deployment.makeDevice()
        XCTAssertEqual(try attest(env, clean, deviceToken: SecureRandom.bytes(96)).0, 200)
        XCTAssertEqual(try env.deployment.store.device(id: Hex.encode(clean.keyID))?.tier, DeviceRecord.defaultTier)
    }

    func testFlaggedTierMustBeADefinedTierAndNeedsFlagMode() throws {
        XCTAssertThrowsError(try KeywardConfiguration.parse(text: """
            [apple]
            team_id = "\(Self.teamID)"
            bundle_ids = ["\(LocalDeployment.bundleID)"]
            environment = "development"
            [apple.devicecheck]
            key_id = "\(Self.keyID)"
            flagged_tier = "probaton"
            [tiers.probation]
            install_daily_credits = 5
            """, path: "keyward.toml")) { error in
            XCTAssertTrue("\(error)".contains("keyward.toml:7: apple.devicecheck.flagged_tier: must name a tier defined under [tiers]"), "\(error)")
        }
        XCTAssertThrowsError(try configurationWithDeviceCheck(baseURL: "http://127.0.0.1:1", onFlagged: .refuse, flaggedTier: "probation", timeoutMs: 1_000)) { error in
            XCTAssertTrue("\(error)".contains("flagged_tier: only applies with on_flagged"), "\(error)")
        }
    }

    func testRefuseModeTurnsANewKeyOnAFlaggedPhoneAway() throws {
        let (env, apple) = try start(onFlagged: .refuse)
        let phone = SecureRandom.bytes(96)
        apple.setBits(phone, (true, false))
        let (status, json) = try attest(env, try env.deployment.makeDevice(), deviceToken: phone)
        XCTAssertEqual(status, 403)
        XCTAssertEqual(json as? [String: String], ["error": "forbidden"])
        XCTAssertEqual(env.lastReason(route: "attest_ios"), "devicecheck_flagged")
        // A clean phone is let in.
        XCTAssertEqual(try attest(env, try env.deployment.makeDevice(), deviceToken: SecureRandom.bytes(96)).0, 200)
    }

    func testAppleDownOrSlowFailsOpenCountedAndLogged() throws {
        let (env, _) = try start(appleUp: false)
        let (status, json) = try attest(env, try env.deployment.makeDevice(), deviceToken: SecureRandom.bytes(96))
        XCTAssertEqual(status, 200, "fails open: \(json)")
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_devicecheck_total", ["outcome": "unreachable"]), 1)
        XCTAssertTrue(env.logLines.contains { $0.contains("\"event\":\"devicecheck_unreachable\"") })
    }

    func testAppleSlowerThanTheDeadlineFailsOpen() throws {
        let (env, apple) = try start(timeoutMs: 300)
        apple.setDelay(2)
        let (status, _) = try attest(env, try env.deployment.makeDevice(), deviceToken: SecureRandom.bytes(96))
        XCTAssertEqual(status, 200)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_devicecheck_total", ["outcome": "unreachable"]), 1)
    }

    func testNotConfiguredAbstainsAndIsNeverCountedAsDown() throws {
        let env = try TestDeployment(time: clock)
        self.env = env
        let (status, json) = try attest(env, try env.deployment.makeDevice(), deviceToken: SecureRandom.bytes(96))
        XCTAssertEqual(status, 200, "\(json)")
        XCTAssertFalse(env.deployment.service.metrics.render().contains("keyward_devicecheck_total{"), "no look-up, no count, no 'unreachable'")
        XCTAssertFalse(env.logLines.contains { $0.contains("devicecheck") })
    }

    /// A fake Apple DeviceCheck on 127.0.0.1 (kept in `appleServer`, stopped by tearDown), a
    /// folder, and a keyward.toml there with a SQLite store in it and DeviceCheck pointed at the
    /// fake: what the `keyward devices` commands run against. The caller removes the folder.
    private func cliWithFakeDeviceCheck() throws -> (key: ECPrivateKey, fake: FakeAppleDeviceCheck, folder: TemporaryFolder, config: String) {
        let key = try ECPrivateKey.generate(.p256)
        let fake = FakeAppleDeviceCheck(publicKey: key.publicKey, now: { SystemTimeSource().nowSeconds() })
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1), bodyLimit: { _ in 64 * 1024 }) { head, body, writer in
            let (status, answer) = fake.handle(path: head.path, authorization: head.header("authorization"), body: body)
            writer.respond(status: status, headers: [("Content-Type", "application/json")], body: answer)
        }
        try server.start()
        appleServer = server
        let folder = try TemporaryFolder()
        let config = try folder.write("keyward.toml", """
            [store]
            url = "sqlite://\(folder.path)/k.db"
            [apple]
            team_id = "\(Self.teamID)"
            bundle_ids = ["\(LocalDeployment.bundleID)"]
            environment = "development"
            [apple.devicecheck]
            key_id = "\(Self.keyID)"
            base_url = "http://127.0.0.1:\(server.port)"
            """)
        return (key, fake, folder, config)
    }

    func testDevicesRevokeSetsBitZeroOfThePhoneAtApple() throws {
        let (key, fake, folder, config) = try cliWithFakeDeviceCheck()
        defer { folder.remove() }
        let phone = SecureRandom.bytes(96)
        let store = try openStore(url: "sqlite://\(folder.path)/k.db")
        try store.migrate()
        let now = SystemTimeSource().nowSeconds()
        XCTAssertEqual(try store.registerDevice(DeviceRecord(
            id: "ab12", platform: "ios", publicKey: Array(repeating: 4, count: 65), counter: 0, environment: "development",
            createdAt: now, lastSeenAt: now, deviceCheckToken: phone)), .inserted)
        fake.setBits(phone, (false, true))
        let result = try KeywardBinary.run(["devices", "revoke", "--id", "ab12", "--config", config],
                                           environment: [DeviceCheckClient.secretName: key.pkcs8PEM])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("DeviceCheck: bit 0 set for 1 phone"), result.stdout)
        XCTAssertTrue(fake.bits(phone).map { $0.0 && $0.1 } ?? false, "bit 0 set, bit 1 kept")
        XCTAssertEqual(fake.calls.map(\.path), ["/v1/query_two_bits", "/v1/update_two_bits"])
        XCTAssertTrue(fake.calls.allSatisfy(\.jwtValid))
    }

    /// `revoke --unattested --yes` marks phones as `revoke --before` does: a device made unattested
    /// after attesting with a DeviceCheck token gets bit 0 set; one without a token and an attested
    /// device are not asked about.
    func testRevokeUnattestedSetsBitZeroOfARevokedPhoneThatSentAToken() throws {
        let (key, fake, folder, config) = try cliWithFakeDeviceCheck()
        defer { folder.remove() }
        let demotedPhone = SecureRandom.bytes(96)
        let attestedPhone = SecureRandom.bytes(96)
        let store = try openStore(url: "sqlite://\(folder.path)/k.db")
        try store.migrate()
        let now = SystemTimeSource().nowSeconds()
        for record in [
            DeviceRecord(id: "ab12", platform: "ios", publicKey: Array(repeating: 4, count: 65), counter: 0, environment: "development",
                         createdAt: now, lastSeenAt: now, deviceCheckToken: demotedPhone, attested: false, unattestedReason: "nonce_mismatch"),
            DeviceRecord(id: "cd34", platform: "ios", publicKey: [], counter: 0, environment: "",
                         createdAt: now, lastSeenAt: now, tier: DeviceRecord.unattestedTier, attested: false, unattestedReason: "proof_missing"),
            DeviceRecord(id: "ef56", platform: "ios", publicKey: Array(repeating: 4, count: 65), counter: 0, environment: "development",
                         createdAt: now, lastSeenAt: now, deviceCheckToken: attestedPhone),
        ] { XCTAssertEqual(try store.registerDevice(record), .inserted) }
        fake.setBits(demotedPhone, (false, true))
        let result = try KeywardBinary.run(["devices", "revoke", "--unattested", "--yes", "--config", config],
                                           environment: [DeviceCheckClient.secretName: key.pkcs8PEM])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.split(separator: "\n").map(String.init), ["revoked 2 unattested devices", "DeviceCheck: bit 0 set for 1 phone"])
        XCTAssertTrue(fake.bits(demotedPhone).map { $0.0 && $0.1 } ?? false, "bit 0 set, bit 1 kept")
        XCTAssertNil(fake.bits(attestedPhone), "the attested device's phone is not asked about")
        XCTAssertEqual(fake.calls.map(\.path), ["/v1/query_two_bits", "/v1/update_two_bits"])
        XCTAssertEqual(try store.device(id: "ef56")?.revoked, false)
    }
}
