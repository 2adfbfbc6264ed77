import AppAttest
import DeviceSimulator
import Foundation
import HTTPServer
@testable import Keyward
import KeywardCrypto
import KeywardDemo
import Store
import Upstream
import XCTest

/// `[apple.risk]` end to end: a device attests with a real (test-chain) receipt, the refresh gets
/// metric 7 from a fake Apple, the device record and `/metrics` show it, and the device's next
/// handshake gets the configured action; Apple down → fail open and counted; not configured → no
/// refresh and no action.
final class ReceiptRiskEndToEndTests: XCTestCase {
    static let keyID = "DCKEY12345"
    let clock = ManualTimeSource(seconds: 1_900_000_000)
    var env: TestDeployment?
    var appleServer: HTTPServer?
    var http: UpstreamClient?

    override func tearDown() {
        env?.shutdown()
        appleServer?.stop()
        http?.shutdown()
    }

    struct Started {
        let env: TestDeployment
        let apple: ReceiptRefreshTests.FakeAppleReceipts
        let signer: TestReceiptSigner
    }

    func start(onExceeded: RiskSettings.OnExceeded?, appleUp: Bool = true) throws -> Started {
        let now = clock.nowSeconds()
        let key = try ECPrivateKey.generate(.p256)
        let apple = ReceiptRefreshTests.FakeAppleReceipts(publicKey: key.publicKey, now: now, teamID: LocalDeployment.teamID)
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 2), bodyLimit: { _ in 64 * 1024 }) { head, body, writer in
            let (status, answer) = apple.handle(path: head.path, authorization: head.header("authorization"), body: body)
            writer.respond(status: status, headers: [("Content-Type", "text/plain")], body: answer)
        }
        try server.start()
        let port = server.port
        if appleUp { appleServer = server } else { server.stop() }
        let http = UpstreamClient()
        self.http = http
        let deviceCheck = DeviceCheckClient(teamID: LocalDeployment.teamID, settings: DeviceCheckSettings(keyID: Self.keyID), privateKey: key, http: http)
        let signer = try TestReceiptSigner.generate(validFrom: now - 86_400, validUntil: now + 365 * 86_400)
        let made = try TestDeployment(time: clock, settings: { settings in
            if let onExceeded {
                settings.apple?.risk = RiskSettings(maxMetric: 5, onExceeded: onExceeded, baseURL: "http://127.0.0.1:\(port)", timeoutMs: 2_000)
            }
        }, deviceCheck: deviceCheck, receiptRoot: signer.root)
        env = made
        return Started(env: made, apple: apple, signer: signer)
    }

    /// A device with a real ATTEST receipt, attested; Apple's next answer a RECEIPT with `metric`.
    func attestedDevice(_ started: Started, answering metric: Int) throws -> SimulatedAppleDevice {
        let device = try SimulatedAppleDevice(anchor: started.env.deployment.anchor, teamID: LocalDeployment.teamID,
                                              bundleID: LocalDeployment.bundleID, environment: .development, receiptSigner: started.signer)
        let (status, json) = try started.env.attest(device)
        XCTAssertEqual(status, 200, "\(json)")
        let stored = try XCTUnwrap(try started.env.deployment.store.device(id: Hex.encode(device.keyID)))
        let certificate = try XCTUnwrap(try ReceiptVerifier(trustedRoot: started.signer.root)
            .verify(receipt: stored.receipt, at: clock.nowSeconds())).attestedKeyCertificate
        let now = clock.nowSeconds()
        let next = try started.signer.refreshedReceipt(appID: device.appID, credentialCertificate: certificate, riskMetric: metric,
                                                       environment: "sandbox", createdAt: now, notBefore: now + 86_400, expiresAt: now + 90 * 86_400)
        started.apple.answer(200, Array(Base64.encode(next).utf8))
        return device
    }

    func testMetricSevenFromAppleRefusesTheNextHandshake() throws {
        let started = try start(onExceeded: .refuse)
        let device = try attestedDevice(started, answering: 7)
        started.env.deployment.service.refreshReceipts()
        let record = try XCTUnwrap(try started.env.deployment.store.device(id: Hex.encode(device.keyID)))
        XCTAssertEqual(record.riskMetric, 7)
        XCTAssertEqual(started.apple.calls.count, 1)
        XCTAssertEqual(started.apple.calls.first?.jwtValid, true)
        let metrics = started.env.deployment.service.metrics
        XCTAssertEqual(metrics.value("keyward_receipt_refreshes_total", ["outcome": "refreshed"]), 1)
        let text = metrics.render()
        XCTAssertTrue(text.contains("keyward_risk_metric_bucket{le=\"5\"} 0\n"), text)
        XCTAssertTrue(text.contains("keyward_risk_metric_bucket{le=\"10\"} 1\n"), text)
        XCTAssertTrue(text.contains("keyward_risk_metric_sum 7\n"), text)
        XCTAssertFalse(text.contains(Hex.encode(device.keyID)), "no per-device label")

        let (status, json) = try started.env.assert(device)
        XCTAssertEqual(status, 403)
        XCTAssertEqual(json as? [String: String], ["error": "forbidden"])
        XCTAssertTrue(started.env.deployment.logSink.lines.joined(separator: "\n").contains("risk_metric_exceeded"))
    }

    func testMetricSevenMovesTheDeviceToTheConfiguredTierAtItsNextHandshake() throws {
        let started = try start(onExceeded: .tier("suspect"))
        let device = try attestedDevice(started, answering: 7)
        XCTAssertEqual(try started.env.assert(device).0, 200, "no metric yet: passes")
        XCTAssertEqual(try started.env.deployment.store.device(id: Hex.encode(device.keyID))?.tier, "free")
        started.env.deployment.service.refreshReceipts()
        XCTAssertEqual(try started.env.deployment.store.device(id: Hex.encode(device.keyID))?.riskMetric, 7)
        XCTAssertEqual(try started.env.assert(device).0, 200)
        XCTAssertEqual(try started.env.deployment.store.device(id: Hex.encode(device.keyID))?.tier, "suspect")
    }

    func testAMetricAtTheLimitPasses() throws {
        let started = try start(onExceeded: .refuse)
        let device = try attestedDevice(started, answering: 5)
        started.env.deployment.service.refreshReceipts()
        XCTAssertEqual(try started.env.deployment.store.device(id: Hex.encode(device.keyID))?.riskMetric, 5)
        XCTAssertEqual(try started.env.assert(device).0, 200)
    }

    func testAppleDownFailsOpenAndIsCounted() throws {
        let started = try start(onExceeded: .refuse, appleUp: false)
        let device = try attestedDevice(started, answering: 7)
        started.env.deployment.service.refreshReceipts()
        XCTAssertNil(try started.env.deployment.store.device(id: Hex.encode(device.keyID))?.riskMetric)
        XCTAssertEqual(started.env.deployment.service.metrics.value("keyward_receipt_refreshes_total", ["outcome": "failed"]), 1)
        XCTAssertTrue(started.env.deployment.logSink.lines.joined(separator: "\n").contains("\"event\":\"receipt_refresh\""))
        XCTAssertTrue(started.env.deployment.logSink.lines.joined(separator: "\n").contains("receipt_refresh_unreachable"))
        XCTAssertEqual(try started.env.assert(device).0, 200, "fail open: the session is granted")
    }

    func testNotConfiguredAbstains() throws {
        let started = try start(onExceeded: nil)
        let device = try attestedDevice(started, answering: 7)
        XCTAssertNil(started.env.deployment.service.receiptRefresh)
        started.env.deployment.service.refreshReceipts()
        XCTAssertEqual(started.apple.calls.count, 0)
        // Even a metric already stored (by another instance, say) is not acted on.
        XCTAssertTrue(try started.env.deployment.store.storeRefreshedReceipt(
            deviceID: Hex.encode(device.keyID), receipt: [1], riskMetric: 99, refreshedAt: clock.nowSeconds(), refreshAfter: clock.nowSeconds()))
        XCTAssertEqual(try started.env.assert(device).0, 200)
    }
}
