import XCTest
@testable import Store

/// What every `Store` must do for App Attest receipt refresh: a refreshed receipt and its risk
/// metric stored for a live iOS device only, refreshes postponed, and the devices due listed in order.
enum ReceiptRiskConformance {
    static let now = StoreConformance.now

    static func refreshedReceiptIsStoredForALiveIOSDeviceOnly(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.registerDevice(StoreConformance.iosDevice("ab01")), .inserted)
        let fresh = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertNil(fresh.riskMetric)
        XCTAssertNil(fresh.receiptRefreshedAt)
        XCTAssertNil(fresh.receiptRefreshAfter)

        XCTAssertTrue(try store.storeRefreshedReceipt(deviceID: "ab01", receipt: [9, 9], riskMetric: 7, refreshedAt: now, refreshAfter: now + 86_400))
        let stored = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertEqual(stored.receipt, [9, 9])
        XCTAssertEqual(stored.riskMetric, 7)
        XCTAssertEqual(stored.receiptRefreshedAt, now)
        XCTAssertEqual(stored.receiptRefreshAfter, now + 86_400)
        XCTAssertEqual(try store.listDevices(attestedBefore: nil).first?.riskMetric, 7)

        XCTAssertFalse(try store.storeRefreshedReceipt(deviceID: "absent", receipt: [1], riskMetric: 1, refreshedAt: now, refreshAfter: now))
        XCTAssertThrowsError(try store.storeRefreshedReceipt(deviceID: "ab01", receipt: [1], riskMetric: -1, refreshedAt: now, refreshAfter: now)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "risk_metric")
        }
        XCTAssertTrue(try store.setRevoked(deviceID: "ab01", true, now: now))
        XCTAssertFalse(try store.storeRefreshedReceipt(deviceID: "ab01", receipt: [1], riskMetric: 2, refreshedAt: now, refreshAfter: now))
        XCTAssertEqual(try store.device(id: "ab01")?.riskMetric, 7)
    }

    static func dueDevicesAreListedNeverAskedFirstThenOldest(_ harness: StoreHarness) throws {
        let store = try harness.open()
        for id in ["ab01", "ab02", "ab03", "ab04"] {
            var device = StoreConformance.iosDevice(id)
            device.receipt = [1, 2, 3]
            XCTAssertEqual(try store.registerDevice(device), .inserted)
        }
        var noReceipt = StoreConformance.iosDevice("ab05")
        noReceipt.receipt = []
        XCTAssertEqual(try store.registerDevice(noReceipt), .inserted)
        XCTAssertTrue(try store.postponeReceiptRefresh(deviceID: "ab01", until: now + 20))
        XCTAssertTrue(try store.postponeReceiptRefresh(deviceID: "ab02", until: now + 10))
        XCTAssertTrue(try store.postponeReceiptRefresh(deviceID: "ab03", until: now + 100))
        XCTAssertFalse(try store.postponeReceiptRefresh(deviceID: "absent", until: now))
        XCTAssertTrue(try store.setRevoked(deviceID: "ab04", true, now: now))
        XCTAssertEqual(try store.devicesDueForReceiptRefresh(now: now, limit: 10).map(\.id), [])
        XCTAssertEqual(try store.devicesDueForReceiptRefresh(now: now + 50, limit: 10).map(\.id), ["ab02", "ab01"])
        XCTAssertEqual(try store.devicesDueForReceiptRefresh(now: now + 50, limit: 1).map(\.id), ["ab02"])
        XCTAssertTrue(try store.setRevoked(deviceID: "ab04", false, now: now))
        XCTAssertEqual(try store.devicesDueForReceiptRefresh(now: now + 50, limit: 10).map(\.id), ["ab04", "ab02", "ab01"])
    }
}
