import AppAttest
import DeviceSimulator
import Foundation
import HTTPServer
@testable import Keyward
import KeywardCrypto
import Store
import Synchronization
import Upstream
import XCTest

/// Receipt refresh against a fake Apple receipt endpoint on loopback that answers with receipts
/// minted under a test chain: the JWT checked on every call, a refreshed receipt's metric 7 stored on
/// the device, Apple's 304 and the per-device minimum interval respected, Apple down or a receipt
/// that does not verify → nothing stored, counted by reason, retried later (fail open).
final class ReceiptRefreshTests: XCTestCase {
    static let teamID = "ABCDE12345"
    static let keyID = "DCKEY12345"
    let now: Int64 = 1_800_000_000

    /// Apple's `/v1/attestationData`: answers what the test scripted, records every call.
    final class FakeAppleReceipts: Sendable {
        struct Call: Sendable {
            let jwtValid: Bool
            let receipt: [UInt8]?
        }
        private struct State {
            var calls: [Call] = []
            var answer: (Int, [UInt8]) = (404, [])
            var now: Int64 = 0
        }
        private let state = Mutex(State())
        let publicKey: ECPublicKey
        let teamID: String

        init(publicKey: ECPublicKey, now: Int64, teamID: String = ReceiptRefreshTests.teamID) {
            self.publicKey = publicKey
            self.teamID = teamID
            state.withLock { $0.now = now }
        }

        /// Apple's clock, which a JWT's `iat` must be near.
        func setNow(_ now: Int64) { state.withLock { $0.now = now } }

        var calls: [Call] { state.withLock { $0.calls } }
        func answer(_ status: Int, _ body: [UInt8] = []) { state.withLock { $0.answer = (status, body) } }

        /// The whole header value is the compact JWS: `alg` ES256, `kid`, `iss` the team, a recent `iat`.
        func jwtValid(_ authorization: String?) -> Bool {
            guard let authorization else { return false }
            let parts = authorization.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let headerBytes = Base64.decode(parts[0]), let claimBytes = Base64.decode(parts[1]),
                  let signature = Base64.decode(parts[2]),
                  let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
                  let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any],
                  header["alg"] as? String == "ES256", header["kid"] as? String == ReceiptRefreshTests.keyID,
                  claims["iss"] as? String == teamID,
                  let iat = (claims["iat"] as? NSNumber)?.int64Value, abs(iat - state.withLock({ $0.now })) <= 60
            else { return false }
            return publicKey.isValidSignature(raw: signature, message: Array((parts[0] + "." + parts[1]).utf8))
        }

        func handle(path: String, authorization: String?, body: [UInt8]) -> (Int, [UInt8]) {
            let receipt = Base64.decode(String(decoding: body, as: UTF8.self))
            let valid = jwtValid(authorization)
            state.withLock { $0.calls.append(Call(jwtValid: valid, receipt: receipt)) }
            guard path == "/v1/attestationData" else { return (404, []) }
            guard valid, receipt != nil else { return (401, []) }
            return state.withLock { $0.answer }
        }
    }

    struct Setup {
        let store: SQLiteStore
        let apple: FakeAppleReceipts
        let refresher: ReceiptRefresher
        let device: SimulatedAppleDevice
        let credentialCertificate: [UInt8]
        let signer: TestReceiptSigner
        let servers: [HTTPServer]
        let http: UpstreamClient
    }

    var cleanup: [() -> Void] = []
    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    var directory = URL(fileURLWithPath: "/")

    func makeSetup(appleUp: Bool = true) throws -> Setup {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("receipt-refresh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let directory = directory
        cleanup.append { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("keyward.sqlite").path)

        let signer = try TestReceiptSigner.generate(validFrom: now - 86_400, validUntil: now + 365 * 86_400)
        let anchor = try TestTrustAnchor.generate(validFrom: now - 86_400, validUntil: now + 365 * 86_400)
        let device = try SimulatedAppleDevice(anchor: anchor, teamID: Self.teamID, bundleID: "com.example.app",
                                              environment: .production, receiptSigner: signer)
        let object = try AttestationObject(bytes: device.attestation(clientDataHash: SHA256.hash([1]), at: now))
        XCTAssertEqual(try store.registerDevice(DeviceRecord(
            id: Hex.encode(device.keyID), platform: "ios", publicKey: device.publicKey, counter: 0, environment: "production",
            createdAt: now, lastSeenAt: now, receipt: object.receipt, appID: device.appID)), .inserted)

        let key = try ECPrivateKey.generate(.p256)
        let apple = FakeAppleReceipts(publicKey: key.publicKey, now: now)
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 2), bodyLimit: { _ in 64 * 1024 }) { head, body, writer in
            let (status, answer) = apple.handle(path: head.path, authorization: head.header("authorization"), body: body)
            writer.respond(status: status, headers: [("Content-Type", "text/plain")], body: answer)
        }
        try server.start()
        let port = server.port
        if appleUp { cleanup.append { server.stop() } } else { server.stop() }
        let http = UpstreamClient()
        cleanup.append { http.shutdown() }
        let deviceCheck = DeviceCheckClient(teamID: Self.teamID, settings: DeviceCheckSettings(keyID: Self.keyID), privateKey: key, http: http)
        let client = ReceiptRefreshClient(signer: deviceCheck, baseURL: "http://127.0.0.1:\(port)", timeoutMs: 2_000)
        let refresher = ReceiptRefresher(store: store, client: client, verifier: ReceiptVerifier(trustedRoot: signer.root),
                                         minIntervalSeconds: 86_400, retrySeconds: 600)
        return Setup(store: store, apple: apple, refresher: refresher, device: device, credentialCertificate: object.certificates[0],
                     signer: signer, servers: [server], http: http)
    }

    /// One refresh pass at `at`, Apple's clock set to the same time.
    func run(_ setup: Setup, _ at: Int64) throws -> ReceiptRefresher.Pass {
        setup.apple.setNow(at)
        return try setup.refresher.runOnce(now: at)
    }

    func refreshed(_ setup: Setup, metric: Int, notBefore: Int64) throws -> [UInt8] {
        try setup.signer.refreshedReceipt(appID: setup.device.appID, credentialCertificate: setup.credentialCertificate, riskMetric: metric,
                                          environment: "production", createdAt: now, notBefore: notBefore, expiresAt: now + 90 * 86_400)
    }

    func testAppleAnswersMetricSevenAndTheDeviceRecordShowsIt() throws {
        let setup = try makeSetup()
        let id = Hex.encode(setup.device.keyID)
        let stored = try XCTUnwrap(try setup.store.device(id: id)).receipt
        let next = try refreshed(setup, metric: 7, notBefore: now + 3 * 86_400)
        setup.apple.answer(200, Array(Base64.encode(next).utf8))

        let pass = try run(setup, now)
        XCTAssertEqual(pass.outcomes, [id: .refreshed(riskMetric: 7)])
        XCTAssertEqual(setup.apple.calls.count, 1)
        XCTAssertEqual(setup.apple.calls.first?.jwtValid, true)
        XCTAssertEqual(setup.apple.calls.first?.receipt, stored, "the device's latest receipt is what is sent")
        let record = try XCTUnwrap(try setup.store.device(id: id))
        XCTAssertEqual(record.riskMetric, 7)
        XCTAssertEqual(record.receipt, next)
        XCTAssertEqual(record.receiptRefreshedAt, now)
        XCTAssertEqual(record.receiptRefreshAfter, now + 3 * 86_400, "Apple's not-before, later than the minimum interval")

        // The operator sees it: `keyward devices show` and `list`.
        let config = directory.appendingPathComponent("keyward.toml").path
        try "providers_file = \"p.toml\"\n[store]\nurl = \"sqlite://\(directory.path)/keyward.sqlite\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        try "".write(toFile: directory.appendingPathComponent("p.toml").path, atomically: true, encoding: .utf8)
        let shown = try KeywardBinary.run(["devices", "show", "--config", config, "--id", id])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("risk metric  7 (receipt refreshed 2027-01-15T08:00:00Z, next refresh after 2027-01-18T08:00:00Z)"),
                      shown.stdout)
        let listed = try KeywardBinary.run(["devices", "list", "--config", config])
        XCTAssertTrue(listed.stdout.split(separator: "\n").contains { $0.hasPrefix(id) && $0.contains(" 7     no") }, listed.stdout)

        // Not due again before then: no call.
        XCTAssertEqual(try run(setup, now + 86_400).outcomes, [:])
        XCTAssertEqual(setup.apple.calls.count, 1)
        // Then the new receipt is the one sent; Apple's 304 keeps it and waits the minimum interval.
        setup.apple.answer(304)
        XCTAssertEqual(try run(setup, now + 3 * 86_400).outcomes, [id: .notModified])
        XCTAssertEqual(setup.apple.calls.last?.receipt, next)
        XCTAssertEqual(try setup.store.device(id: id)?.riskMetric, 7)
        XCTAssertEqual(try setup.store.device(id: id)?.receiptRefreshAfter, now + 4 * 86_400)
    }

    func testAppleDownFailsOpenAndRetriesLater() throws {
        let setup = try makeSetup(appleUp: false)
        let id = Hex.encode(setup.device.keyID)
        XCTAssertEqual(try run(setup, now).outcomes, [id: .failed("receipt_refresh_unreachable")])
        let record = try XCTUnwrap(try setup.store.device(id: id))
        XCTAssertNil(record.riskMetric)
        XCTAssertFalse(record.revoked)
        XCTAssertEqual(record.receiptRefreshAfter, now + 600)
        XCTAssertEqual(try run(setup, now + 599).outcomes, [:])
    }

    func testAReceiptThatDoesNotVerifyIsNotStored() throws {
        let setup = try makeSetup()
        let id = Hex.encode(setup.device.keyID)
        let other = try TestReceiptSigner.generate(validFrom: now - 86_400, validUntil: now + 86_400)
        let forged = try other.refreshedReceipt(appID: setup.device.appID, credentialCertificate: setup.credentialCertificate, riskMetric: 0,
                                                environment: "production", createdAt: now, notBefore: now, expiresAt: now + 86_400)
        setup.apple.answer(200, Array(Base64.encode(forged).utf8))
        XCTAssertEqual(try run(setup, now).outcomes, [id: .refused("receipt_chain_untrusted")])
        // Another device's receipt, properly signed.
        let stranger = try setup.signer.refreshedReceipt(appID: "ABCDE12345.com.example.other", credentialCertificate: setup.credentialCertificate,
                                                         riskMetric: 0, environment: "production", createdAt: now, notBefore: now,
                                                         expiresAt: now + 86_400)
        setup.apple.answer(200, Array(Base64.encode(stranger).utf8))
        XCTAssertEqual(try run(setup, now + 600).outcomes, [id: .refused("receipt_app_id_mismatch")])
        setup.apple.answer(500)
        XCTAssertEqual(try run(setup, now + 1200).outcomes, [id: .failed("receipt_refresh_status_500")])
        setup.apple.answer(404)
        XCTAssertEqual(try run(setup, now + 1800).outcomes, [id: .noData])
        XCTAssertNil(try setup.store.device(id: id)?.riskMetric)
    }

    /// serve judges a refreshed receipt as `inspect receipt` does: one created after the refresh's
    /// clock (beyond a minute of leeway) is not stored, and a minute's lag is tolerated.
    func testAReceiptCreatedAfterTheRefreshTimeIsNotStored() throws {
        let setup = try makeSetup()
        let id = Hex.encode(setup.device.keyID)
        let future = try setup.signer.refreshedReceipt(appID: setup.device.appID, credentialCertificate: setup.credentialCertificate,
                                                       riskMetric: 3, environment: "production", createdAt: now + 3_600,
                                                       notBefore: now + 3_600, expiresAt: now + 90 * 86_400)
        setup.apple.answer(200, Array(Base64.encode(future).utf8))
        XCTAssertEqual(try run(setup, now).outcomes, [id: .refused("receipt_before_creation")])
        XCTAssertNil(try setup.store.device(id: id)?.riskMetric)
        let aMinuteAhead = try setup.signer.refreshedReceipt(appID: setup.device.appID, credentialCertificate: setup.credentialCertificate,
                                                             riskMetric: 3, environment: "production", createdAt: now + 600 + 60,
                                                             notBefore: now + 600 + 60, expiresAt: now + 90 * 86_400)
        setup.apple.answer(200, Array(Base64.encode(aMinuteAhead).utf8))
        XCTAssertEqual(try run(setup, now + 600).outcomes, [id: .refreshed(riskMetric: 3)])
        XCTAssertEqual(try setup.store.device(id: id)?.riskMetric, 3)
    }
}
