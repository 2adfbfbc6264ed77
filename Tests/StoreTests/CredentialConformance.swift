import Synchronization
import XCTest
@testable import Store

/// Install credential behaviour every `Store` must show (SQLite and PostgreSQL run it).
extension StoreConformance {
    static func credentialRotatesRetriesOnceAndRevokesACopiedFamily(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let expiry = now + 86_400
        try store.putInstallCredential(hash: hash(40), deviceID: "dev1", expiresAt: expiry, now: now)
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(40), successorHash: hash(41), nonce: [1, 2], now: now + 1, retryWindowSeconds: 60),
                       .rotated(deviceID: "dev1", expiresAt: expiry), "the successor keeps the chain's expiry")
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(40), successorHash: hash(49), nonce: [9], now: now + 61, retryWindowSeconds: 60),
                       .retried(deviceID: "dev1", nonce: [1, 2], expiresAt: expiry), "the stored nonce, not the new one")
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(40), successorHash: hash(49), nonce: [9], now: now + 2, retryWindowSeconds: 60),
                       .refused(reason: "credential_superseded"), "once more only")
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(41), successorHash: hash(42), nonce: [3], now: now + 3, retryWindowSeconds: 60),
                       .rotated(deviceID: "dev1", expiresAt: expiry))
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(40), successorHash: hash(49), nonce: [9], now: now + 4, retryWindowSeconds: 60),
                       .reused(deviceID: "dev1"))
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(42), successorHash: hash(43), nonce: [4], now: now + 5, retryWindowSeconds: 60),
                       .refused(reason: "credential_revoked"))
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(50), successorHash: hash(51), nonce: [5], now: now, retryWindowSeconds: 60),
                       .refused(reason: "credential_unknown"))
        XCTAssertThrowsError(try store.putInstallCredential(hash: [1, 2, 3], deviceID: "dev1", expiresAt: expiry, now: now)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "credential_hash_length")
        }
    }

    static func credentialExpiresAndDeviceRevocationRevokesIt(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.registerDevice(DeviceRecord(id: "dev2", platform: "android", publicKey: [], counter: 0, environment: "standard",
                                                             createdAt: now, lastSeenAt: now)), .inserted)
        try store.putInstallCredential(hash: hash(60), deviceID: "dev2", expiresAt: now + 100, now: now)
        try store.putInstallCredential(hash: hash(61), deviceID: "dev3", expiresAt: now + 100, now: now)
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(61), successorHash: hash(62), nonce: [1], now: now + 100, retryWindowSeconds: 60),
                       .refused(reason: "credential_expired"), "expiresAt itself is already expired")
        XCTAssertTrue(try store.setRevoked(deviceID: "dev2", true, now: now + 1))
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(60), successorHash: hash(63), nonce: [1], now: now + 2, retryWindowSeconds: 60),
                       .refused(reason: "credential_revoked"))
        XCTAssertEqual(try store.purgeExpired(nowMillis: (now + 100) * 1_000).installCredentials, 2)
    }

    /// A reuse moves the device's `sessionsNotBefore` past the second it was detected in (so every
    /// session issued until then is refused), in the same transaction; rotations and refusals
    /// leave it alone.
    static func credentialReuseRefusesTheDevicesSessionsIssuedUntilThen(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.registerDevice(DeviceRecord(id: "dev4", platform: "android", publicKey: [], counter: 0, environment: "standard",
                                                             createdAt: now, lastSeenAt: now)), .inserted)
        XCTAssertEqual(try store.device(id: "dev4")?.sessionsNotBefore, 0, "a new device refuses no session")
        try store.putInstallCredential(hash: hash(70), deviceID: "dev4", expiresAt: now + 1_000, now: now)
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(70), successorHash: hash(71), nonce: [1], now: now + 1, retryWindowSeconds: 60),
                       .rotated(deviceID: "dev4", expiresAt: now + 1_000))
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(71), successorHash: hash(72), nonce: [2], now: now + 2, retryWindowSeconds: 60),
                       .rotated(deviceID: "dev4", expiresAt: now + 1_000))
        XCTAssertEqual(try store.device(id: "dev4")?.sessionsNotBefore, 0, "rotations refuse no session")
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(70), successorHash: hash(79), nonce: [9], now: now + 10, retryWindowSeconds: 60),
                       .reused(deviceID: "dev4"))
        XCTAssertEqual(try store.device(id: "dev4")?.sessionsNotBefore, now + 11, "sessions issued up to the detection's second are refused")
        XCTAssertEqual(try store.listDevices(attestedBefore: nil).first { $0.id == "dev4" }?.sessionsNotBefore, now + 11)
        XCTAssertEqual(try store.exchangeInstallCredential(hash: hash(72), successorHash: hash(78), nonce: [8], now: now + 20, retryWindowSeconds: 60),
                       .refused(reason: "credential_revoked"))
        XCTAssertEqual(try store.device(id: "dev4")?.sessionsNotBefore, now + 11, "a refusal moves nothing")
    }

    static func concurrentRefreshesWithOneCredentialRotateOnce(_ harness: StoreHarness) throws {
        let store = try harness.open()
        try store.putInstallCredential(hash: hash(70), deviceID: "dev4", expiresAt: now + 86_400, now: now)
        let outcomes = Mutex<[String: Int]>([:])
        let tally = Tally()
        runOnThreads(20) { index in
            do {
                let outcome = try store.exchangeInstallCredential(
                    hash: hash(70), successorHash: hash(UInt8(100 + index)), nonce: [UInt8(index)], now: now + 1, retryWindowSeconds: 60)
                let name: String
                switch outcome {
                case .rotated: name = "rotated"
                case .retried: name = "retried"
                case .reused: name = "reused"
                case .refused(let reason): name = reason
                }
                outcomes.withLock { $0[name, default: 0] += 1 }
            } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertEqual(outcomes.withLock { $0 }, ["rotated": 1, "retried": 1, "credential_superseded": 18])
    }
}
