import XCTest
@testable import Store

/// What every `Store` must do for the gate: unattested devices stored with their reason, moved to
/// attested by a verified proof and back by an admitted one, and revoked in bulk.
enum GateConformance {
    static let now = StoreConformance.now

    static func unattested(_ id: String, platform: String = "ios", reason: String = "nonce_mismatch") -> DeviceRecord {
        DeviceRecord(id: id, platform: platform, publicKey: [], counter: 0, environment: "", createdAt: now, lastSeenAt: now,
                     tier: DeviceRecord.unattestedTier, attested: false, unattestedReason: reason)
    }

    static func unattestedDevicesRoundTripAndAreValidated(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.registerDevice(unattested("ab01")), .inserted)
        let stored = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertFalse(stored.attested)
        XCTAssertEqual(stored.unattestedReason, "nonce_mismatch")
        XCTAssertEqual(stored.tier, "unattested")
        XCTAssertEqual(try store.registerDevice(StoreConformance.iosDevice("ab02")), .inserted)
        let attested = try XCTUnwrap(try store.device(id: "ab02"))
        XCTAssertTrue(attested.attested)
        XCTAssertNil(attested.unattestedReason)
        XCTAssertEqual(try store.listDevices(attestedBefore: nil).map(\.attested), [false, true])

        var noReason = unattested("ab03")
        noReason.unattestedReason = nil
        XCTAssertThrowsError(try store.registerDevice(noReason)) { XCTAssertEqual(($0 as? StoreError)?.reason, "unattested_reason") }
        var reasonWhileAttested = StoreConformance.iosDevice("ab04")
        reasonWhileAttested.unattestedReason = "nonce_mismatch"
        XCTAssertThrowsError(try store.registerDevice(reasonWhileAttested)) { XCTAssertEqual(($0 as? StoreError)?.reason, "unattested_reason") }
        XCTAssertThrowsError(try store.demoteDevice(deviceID: "ab02", reason: "Not A Slug", now: now)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "unattested_reason")
        }
        XCTAssertNil(try store.device(id: "ab03"))
    }

    static func promotionAndDemotionMoveOnlyTheDefaultTiers(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.registerDevice(unattested("ab01")), .inserted)
        XCTAssertEqual(try store.registerDevice(unattested("ab02")), .inserted)
        XCTAssertTrue(try store.setTier(deviceID: "ab02", tier: "pro"))
        // The verified proof: key, counter, receipt, App ID stored; tier unattested → free, pro stays.
        for id in ["ab01", "ab02"] {
            var proven = StoreConformance.iosDevice(id, counter: 3)
            proven.deviceCheckToken = [1, 2]
            XCTAssertTrue(try store.promoteDevice(proven, now: now + 5))
            XCTAssertFalse(try store.promoteDevice(proven, now: now + 6), "already attested: nothing written")
        }
        let promoted = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertTrue(promoted.attested)
        XCTAssertNil(promoted.unattestedReason)
        XCTAssertEqual(promoted.publicKey, Array(repeating: 4, count: 65))
        XCTAssertEqual(promoted.counter, 3)
        XCTAssertEqual(promoted.appID, "TEAMID1234.dev.keyward.app")
        XCTAssertEqual(promoted.deviceCheckToken, [1, 2])
        XCTAssertEqual(promoted.lastSeenAt, now + 5)
        XCTAssertEqual(promoted.tier, "free")
        XCTAssertEqual(try store.device(id: "ab02")?.tier, "pro")
        XCTAssertFalse(try store.promoteDevice(StoreConformance.iosDevice("ffff"), now: now), "unknown device")

        // The counter moves on, and a promotion with an older counter never lowers it.
        XCTAssertTrue(try store.advanceCounter(deviceID: "ab01", publicKey: promoted.publicKey, to: 9, now: now + 7))
        XCTAssertTrue(try store.demoteDevice(deviceID: "ab01", reason: "counter_replay", now: now + 8))
        let demoted = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertFalse(demoted.attested)
        XCTAssertEqual(demoted.unattestedReason, "counter_replay")
        XCTAssertEqual(demoted.tier, "unattested")
        XCTAssertEqual(demoted.publicKey, promoted.publicKey, "the key stays: a later assertion by it proves the device again")
        XCTAssertTrue(try store.promoteDevice(StoreConformance.iosDevice("ab01", counter: 3), now: now + 9))
        XCTAssertEqual(try store.device(id: "ab01")?.counter, 9)
        XCTAssertTrue(try store.demoteDevice(deviceID: "ab02", reason: "nonce_mismatch", now: now + 10))
        XCTAssertEqual(try store.device(id: "ab02")?.tier, "pro", "an operator's tier is never clobbered")

        // Revoked devices move neither way.
        XCTAssertTrue(try store.setRevoked(deviceID: "ab02", true, now: now + 11))
        XCTAssertFalse(try store.promoteDevice(StoreConformance.iosDevice("ab02"), now: now + 12))
        XCTAssertTrue(try store.setRevoked(deviceID: "ab01", true, now: now + 11))
        XCTAssertFalse(try store.demoteDevice(deviceID: "ab01", reason: "nonce_mismatch", now: now + 12))
    }

    static func revokeUnattestedRevokesExactlyThemAndTheirCredentials(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.registerDevice(unattested("ab01")), .inserted)
        XCTAssertEqual(try store.registerDevice(unattested("cd01", platform: "android", reason: "proof_missing")), .inserted)
        XCTAssertEqual(try store.registerDevice(unattested("ab02")), .inserted)
        XCTAssertTrue(try store.setRevoked(deviceID: "ab02", true, now: now + 1))
        XCTAssertEqual(try store.registerDevice(StoreConformance.iosDevice("ab03")), .inserted)
        try store.putInstallCredential(hash: StoreConformance.hash(1), deviceID: "cd01", expiresAt: now + 1000, now: now)
        XCTAssertEqual(try store.countUnattested(), 2, "the revoked one is not counted")

        XCTAssertEqual(try store.revokeUnattested(now: now + 50), 2)
        XCTAssertEqual(try store.device(id: "ab01")?.revoked, true)
        XCTAssertEqual(try store.device(id: "ab01")?.revokedAt, now + 50)
        XCTAssertEqual(try store.device(id: "ab01")?.sessionsNotBefore, now + 51, "its sessions stay refused if it is un-revoked")
        XCTAssertEqual(try store.device(id: "ab03")?.sessionsNotBefore, 0)
        XCTAssertEqual(try store.device(id: "cd01")?.revoked, true)
        XCTAssertEqual(try store.device(id: "ab02")?.revokedAt, now + 1, "revoked before: its time stays")
        XCTAssertEqual(try store.device(id: "ab03")?.revoked, false, "attested devices are untouched")
        XCTAssertEqual(
            try store.exchangeInstallCredential(
                hash: StoreConformance.hash(1), successorHash: StoreConformance.hash(2), nonce: [1], now: now + 60, retryWindowSeconds: 30),
            .refused(reason: "credential_revoked"))
        XCTAssertEqual(try store.countUnattested(), 0)
        XCTAssertEqual(try store.revokeUnattested(now: now + 70), 0)
    }
}
