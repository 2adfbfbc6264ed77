import Store

/// The store writes of the gate (``ProofGate``): a device admitted without a verified proof is
/// stored or recorded unattested (tier `unattested` unless the operator set another), and one
/// that later proves itself becomes attested. Blocking: call these on the store executor or the
/// handshake's blocking executor, never on a loop thread.
enum UnattestedDevices {
    /// Registers `device` (built with `attested = false` and its reason) or, when its id exists,
    /// records that stored device unattested (an already unattested one keeps its first reason).
    /// - Throws: `forbidden` `device_revoked`, `attestation_invalid` `device_platform_conflict`, `unavailable`.
    static func register(_ device: DeviceRecord, store: any Store, now: Int64, record: RequestRecord) throws(APIError) {
        let outcome: RegisterOutcome
        do { outcome = try store.registerDevice(device) } catch { throw StoreFailure.apiError("device_register", error, record: record) }
        guard case .existing(let existing) = outcome else { return }
        guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
        guard existing.platform == device.platform else { throw APIError(.attestationInvalid, reason: "device_platform_conflict") }
        try recordAdmitted(existing, reason: device.unattestedReason ?? ProofGate.proofMissing, store: store, now: now, record: record)
    }

    /// Records that the stored `device` got a session on an admitted proof: an attested device
    /// becomes unattested with `reason` (a session of a device must not carry more trust than its
    /// latest proof); an unattested one is only marked seen.
    /// - Throws: `forbidden` `device_revoked` (revoked meanwhile), `unavailable`.
    static func recordAdmitted(_ device: DeviceRecord, reason: String, store: any Store, now: Int64, record: RequestRecord) throws(APIError) {
        let changed: Bool
        do {
            changed = device.attested
                ? try store.demoteDevice(deviceID: device.id, reason: reason, now: now)
                : try store.markSeen(deviceID: device.id, now: now)
        } catch {
            throw StoreFailure.apiError("device_register", error, record: record)
        }
        guard changed else { throw APIError(.forbidden, reason: "device_revoked") }
    }

    /// Makes the stored unattested device attested with the verified proof's fields of `device`.
    /// - Returns: false when the conditional write found it revoked or already attested.
    static func promote(_ device: DeviceRecord, store: any Store, now: Int64, record: RequestRecord) throws(APIError) -> Bool {
        do { return try store.promoteDevice(device, now: now) } catch { throw StoreFailure.apiError("device_register", error, record: record) }
    }

    /// The stored device `id` (devices are never deleted).
    static func reread(_ id: String, store: any Store, record: RequestRecord) throws(APIError) -> DeviceRecord {
        let found: DeviceRecord?
        do { found = try store.device(id: id) } catch { throw StoreFailure.apiError("device_read", error, record: record) }
        guard let found else { throw APIError(.forbidden, reason: "device_revoked") }
        return found
    }
}
