import DeviceSimulator
import Foundation
import HTTPServer
import KeywardCrypto
@testable import Keyward
import KeywardDemo
import PlayIntegrity
import Store
import Synchronization
import Upstream
import XCTest

/// The Android attestation glue: request checks, both modes through the simulator and the fake Google,
/// the daily decode budget and its ordering after OAuth, and Google over real loopback HTTP.
final class AndroidAttestationTests: XCTestCase {
    static let package = "dev.keyward.demo"
    static let installID = "7d444840-9dc0-11d1-b245-5ffdce74fad2"
    static let certificate = SHA256.hash(Array("android attestation test signer".utf8))
    static let nowMillis: Int64 = 1_780_000_000_000
    nonisolated(unsafe) static var sharedAccount: SimulatedServiceAccount?

    var directory: URL!
    var store: SQLiteStore!
    let challenge = SecureRandom.bytes(32)

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("android-attest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try SQLiteStore(path: directory.appendingPathComponent("keyward.sqlite").path)
    }

    override func tearDownWithError() throws {
        store = nil
        try? FileManager.default.removeItem(at: directory)
    }

    func verdict(_ request: AndroidIntegrityVerdict.Request, installID: String = installID) -> AndroidIntegrityVerdict {
        AndroidIntegrityVerdict(request: request, packageName: Self.package, challenge: challenge, installID: installID,
                                timestampMillis: Self.nowMillis - 2_000, certificateDigest: Self.certificate)
    }

    func failure(_ body: () throws -> Void) -> AndroidAttestFailure? {
        do { try body(); return nil } catch { return error as? AndroidAttestFailure }
    }

    // MARK: classic

    func classic() throws -> (AndroidAttestation, IntegrityTestKeys) {
        let keys = try IntegrityTestKeys.generate()
        let settings = AndroidSettings(packageNames: [Self.package], certificateDigests: [Self.certificate], mode: .classic)
        let secrets = AndroidSecrets.classic(decryptionKeyBase64: keys.decryptionKeyBase64, verificationKeyBase64: keys.verificationKeyBase64)
        return (try AndroidAttestation(settings: settings, secrets: secrets, http: NoNetwork()), keys)
    }

    func testClassicTokenIsAcceptedForTheDeviceOfPackageAndInstall() throws {
        let (android, keys) = try classic()
        let request = try android.request(integrityToken: try keys.classicToken(verdict(.classic)), installID: Self.installID, packageName: nil)
        XCTAssertEqual(request.deviceID, Hex.encode(SHA256.hash(Array((Self.package + Self.installID).utf8))))
        let accepted = try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store)
        XCTAssertEqual(accepted.packageName, Self.package)
        let record = android.deviceRecord(for: request, now: 1_780_000_000)
        XCTAssertEqual(record.platform, "android")
        XCTAssertEqual(record.environment, "classic")
    }

    func testClassicRefusalsAreAttestationInvalidWithTheirSlug() throws {
        let (android, keys) = try classic()
        let other = try IntegrityTestKeys.generate()
        let jws = IntegrityJOSE.unsignedJWS(payload: verdict(.classic).json)
        let cases: [(String, String)] = [
            (try keys.classicToken(verdict(.classic, installID: "00000000-0000-4000-8000-000000000000")), "binding_mismatch"),
            (try IntegrityTestKeys(decryptionKey: other.decryptionKey, signingKey: keys.signingKey).classicToken(verdict(.classic)), "jwe_key_unwrap_failed"),
            (try IntegrityTestKeys(decryptionKey: keys.decryptionKey, signingKey: other.signingKey).classicToken(verdict(.classic)), "jws_signature_invalid"),
            (try IntegrityJOSE.encryptJWE(plaintext: Array(jws.utf8), kek: keys.decryptionKey), "jws_algorithm_unsupported"),
        ]
        for (token, reason) in cases {
            let request = try android.request(integrityToken: token, installID: Self.installID, packageName: Self.package)
            XCTAssertEqual(failure { _ = try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store) },
                           AndroidAttestFailure(.attestationInvalid, reason: reason))
        }
    }

    // MARK: request checks

    func testRequestFieldsAreCheckedBeforeAnything() throws {
        let keys = try IntegrityTestKeys.generate()
        let settings = AndroidSettings(packageNames: [Self.package, "dev.keyward.pro"], certificateDigests: [Self.certificate], mode: .classic)
        let secrets = AndroidSecrets.classic(decryptionKeyBase64: keys.decryptionKeyBase64, verificationKeyBase64: keys.verificationKeyBase64)
        let android = try AndroidAttestation(settings: settings, secrets: secrets, http: NoNetwork())
        func reason(_ token: String = "t", _ install: String = Self.installID, _ package: String? = Self.package) -> String? {
            failure { _ = try android.request(integrityToken: token, installID: install, packageName: package) }?.reason
        }
        XCTAssertNil(reason())
        XCTAssertEqual(reason(""), "integrity_token_missing")
        XCTAssertEqual(reason(String(repeating: "a", count: 16 * 1024 + 1)), "integrity_token_too_large")
        XCTAssertEqual(reason("t", Self.installID.uppercased()), "install_id_malformed")
        XCTAssertEqual(reason("t", "7d444840-9dc0-11d1-b245-5ffdce74fad"), "install_id_malformed")
        XCTAssertEqual(reason("t", "7d444840x9dc0-11d1-b245-5ffdce74fad2"), "install_id_malformed")
        XCTAssertEqual(reason("t", Self.installID, nil), "package_name_required")
        XCTAssertEqual(reason("t", Self.installID, "com.other"), "package_name_unknown")
    }

    func testSecretsOfTheOtherModeOrBadKeysAreMisconfiguration() throws {
        let settings = AndroidSettings(packageNames: [Self.package], certificateDigests: [Self.certificate], mode: .classic)
        XCTAssertThrowsError(try AndroidAttestation(settings: settings, secrets: .standard(serviceAccount: { [] }), http: NoNetwork())) { error in
            XCTAssertEqual((error as? PlayIntegrityError)?.reason, "android_secrets_mismatch")
        }
        XCTAssertThrowsError(try AndroidAttestation(settings: settings, secrets: .classic(decryptionKeyBase64: "AAAA", verificationKeyBase64: "AAAA"), http: NoNetwork())) { error in
            XCTAssertEqual((error as? PlayIntegrityError)?.reason, "classic_decryption_key_invalid")
        }
    }

    // MARK: standard

    func standard(budget: Int = 30) throws -> (AndroidAttestation, LocalGoogle, SimulatedServiceAccount) {
        if Self.sharedAccount == nil { Self.sharedAccount = try SimulatedServiceAccount.generate() }
        let account = try XCTUnwrap(Self.sharedAccount)
        let google = LocalGoogle(now: Self.nowMillis / 1_000)
        google.fake.trust(account)
        let keyFile = try account.keyFile(tokenURI: google.fake.tokenURL)
        let settings = AndroidSettings(packageNames: [Self.package], certificateDigests: [Self.certificate], mode: .standard, decodeBudgetPerDay: budget,
                                       google: GoogleEndpoints(playIntegrityBaseURL: LocalGoogle.baseURL, tokenURL: nil))
        return (try AndroidAttestation(settings: settings, secrets: .standard(serviceAccount: { keyFile }), http: google), google, account)
    }

    func testStandardTokenIsDecodedByGoogleAndAccepted() throws {
        let (android, google, _) = try standard()
        let request = try android.request(integrityToken: google.fake.issueStandardToken(verdict(.standard)), installID: Self.installID, packageName: nil)
        XCTAssertEqual(try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store).packageName, Self.package)
        XCTAssertEqual(android.deviceRecord(for: request, now: 0).environment, "standard")
        XCTAssertEqual(google.fake.decodeCount, 1)
    }

    func testDecodeBudgetExhaustionStopsDecodes() throws {
        let (android, google, _) = try standard(budget: 2)
        let request = try android.request(integrityToken: google.fake.issueStandardToken(verdict(.standard)), installID: Self.installID, packageName: nil)
        for _ in 0..<2 { XCTAssertNoThrow(try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store)) }
        let refused = failure { _ = try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store) }
        XCTAssertEqual(refused?.code, .rateLimited)
        XCTAssertEqual(refused?.reason, "decode_budget_exhausted")
        // 1_780_000_000 s is 20:26:40 UTC: 3 h 33 min 20 s to the next UTC day.
        XCTAssertEqual(refused?.retryAfterSeconds, 12_800)
        XCTAssertEqual(google.fake.decodeCount, 2)
        // Another install of the same app has its own budget; the next UTC day refills this one.
        let other = try android.request(integrityToken: "t", installID: "00000000-0000-4000-8000-000000000001", packageName: nil)
        XCTAssertEqual(failure { _ = try android.verify(other, challenge: challenge, nowMillis: Self.nowMillis, store: store) }?.reason, "token_invalid")
        XCTAssertEqual(google.fake.decodeCount, 3)
        let tomorrow = Self.nowMillis + 12_800_000
        google.fake.setNow(tomorrow / 1_000)
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: challenge, nowMillis: tomorrow, store: store) }?.reason, "timestamp_stale",
                       "decoded again (the verdict itself is old by then)")
        XCTAssertEqual(google.fake.decodeCount, 4)
    }

    func testOAuthFailureSpendsNoBudget() throws {
        let (android, google, account) = try standard(budget: 1)
        let request = try android.request(integrityToken: google.fake.issueStandardToken(verdict(.standard)), installID: Self.installID, packageName: nil)
        google.fake.revokeKeys(of: account.clientEmail)
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store) },
                       AndroidAttestFailure(.internalError, reason: "google_oauth_refused"))
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis + 1_000, store: store) },
                       AndroidAttestFailure(.internalError, reason: "google_oauth_backoff"))
        XCTAssertEqual(google.fake.decodeCount, 0)
        google.fake.trust(account)
        XCTAssertNoThrow(try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis + 60_000, store: store),
                         "the one-decode budget is still whole")
    }

    func testGoogleOutageIsUpstreamError() throws {
        let (android, google, _) = try standard()
        let request = try android.request(integrityToken: google.fake.issueStandardToken(verdict(.standard)), installID: Self.installID, packageName: nil)
        google.fake.setDecodeOutage(503)
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store) },
                       AndroidAttestFailure(.upstreamError, reason: "google_server_error"))
    }

    func testStandardVerdictBoundToAnotherChallengeIsRefused() throws {
        let (android, google, _) = try standard()
        let request = try android.request(integrityToken: google.fake.issueStandardToken(verdict(.standard)), installID: Self.installID, packageName: nil)
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: SecureRandom.bytes(32), nowMillis: Self.nowMillis, store: store) },
                       AndroidAttestFailure(.attestationInvalid, reason: "binding_mismatch"))
    }

    // MARK: loopback

    /// The fake Google served by Keyward's own HTTP server, reached through libcurl.
    func testStandardModeOverLoopbackHTTP() throws {
        if Self.sharedAccount == nil { Self.sharedAccount = try SimulatedServiceAccount.generate() }
        let account = try XCTUnwrap(Self.sharedAccount)
        let holder = Mutex<FakeGooglePlayIntegrity?>(nil)
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1), bodyLimit: { _ in 64 * 1024 }) { head, body, writer in
            guard let fake = holder.withLock({ $0 }) else { return writer.respond(status: 503) }
            let response = fake.handle(method: head.method, path: head.path, headers: head.headers, body: body)
            writer.respond(status: response.status, headers: response.headers, body: response.body)
        }
        try server.start()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let fake = FakeGooglePlayIntegrity(baseURL: base, now: Self.nowMillis / 1_000)
        fake.trust(account)
        holder.withLock { $0 = fake }
        let upstream = UpstreamClient()
        defer { upstream.shutdown() }
        let keyFile = try account.keyFile(tokenURI: fake.tokenURL)
        let settings = AndroidSettings(packageNames: [Self.package], certificateDigests: [Self.certificate], mode: .standard,
                                       google: GoogleEndpoints(playIntegrityBaseURL: base, tokenURL: nil))
        let android = try AndroidAttestation(settings: settings, secrets: .standard(serviceAccount: { keyFile }), http: UpstreamGoogleHTTPClient(upstream: upstream))
        let request = try android.request(integrityToken: fake.issueStandardToken(verdict(.standard)), installID: Self.installID, packageName: nil)
        XCTAssertEqual(try android.verify(request, challenge: challenge, nowMillis: Self.nowMillis, store: store).packageName, Self.package)
        XCTAssertEqual(fake.decodeCount, 1)
        XCTAssertEqual(fake.tokenRequestCount, 1)
    }
}

/// Classic mode never calls Google.
private struct NoNetwork: PlayIntegrityHTTPClient {
    struct Refused: Error {}
    func send(_ request: PlayIntegrityHTTPRequest) throws -> PlayIntegrityHTTPResponse { throw Refused() }
}

/// The fake Google behind PlayIntegrity's HTTP protocol, in memory.
final class LocalGoogle: PlayIntegrityHTTPClient {
    static let baseURL = "http://google.invalid"
    let fake: FakeGooglePlayIntegrity

    init(now: Int64) { fake = FakeGooglePlayIntegrity(baseURL: Self.baseURL, now: now) }

    struct Unreachable: Error {}

    func send(_ request: PlayIntegrityHTTPRequest) throws -> PlayIntegrityHTTPResponse {
        guard request.url.hasPrefix(Self.baseURL) else { throw Unreachable() }
        let response = fake.handle(method: request.method, path: String(request.url.dropFirst(Self.baseURL.count)), headers: request.headers, body: request.body)
        return PlayIntegrityHTTPResponse(status: response.status, body: response.body)
    }
}

extension AndroidAttestationTests {
    func testDecodeRefusedWith401IsRetriedOnceWithAFreshAccessTokenOnTheSameBudget() throws {
        let (android, google, _) = try standard(budget: 2)
        let request = try android.request(integrityToken: google.fake.issueStandardToken(verdict(.standard)), installID: Self.installID, packageName: nil)
        // First attempt (a wrong challenge): caches an access token, spends one unit.
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: SecureRandom.bytes(32), nowMillis: Self.nowMillis, store: store) }?.reason,
                       "binding_mismatch")
        // 50 minutes later Keyward still trusts its token, but Google's clock says it expired: 401, then one retry.
        let later = Self.nowMillis + 3_000_000
        google.fake.setNow(Self.nowMillis / 1_000 + 3_600)
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: challenge, nowMillis: later, store: store) }?.reason, "timestamp_stale",
                       "decoded by the retry (the verdict itself is old by then)")
        XCTAssertEqual(google.fake.decodeCount, 3)
        XCTAssertEqual(google.fake.tokenRequestCount, 2)
        // The retry spent no second unit: the budget of 2 is used up only now.
        XCTAssertEqual(failure { _ = try android.verify(request, challenge: challenge, nowMillis: later, store: store) }?.reason, "decode_budget_exhausted")
    }

    func testServiceAccountKeyNeverPrintsItsPrivateKey() throws {
        if Self.sharedAccount == nil { Self.sharedAccount = try SimulatedServiceAccount.generate() }
        let key = try ServiceAccountKey(json: try XCTUnwrap(Self.sharedAccount).keyFile(tokenURI: "https://oauth2.googleapis.com/token"))
        var dumped = ""
        dump(key, to: &dumped)
        XCTAssertFalse(dumped.contains("PRIVATE KEY"))
        XCTAssertFalse("\(key)".contains("PRIVATE KEY"))
    }
}
