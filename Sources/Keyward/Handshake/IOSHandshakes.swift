import AppAttest
import KeywardCrypto
import Sessions
import Store

/// The iOS handshakes. clientDataHash is SHA-256 of the challenge bytes (Keyward's client
/// convention, README); the device id is hex(key id).

/// `POST /v1/attest/ios`: Apple's attestation of `key_id` registers the device with its key,
/// counter 0 and the App ID it attested for. Under the gate's `monitor` and `off` modes a failed
/// (or, under `off`, missing) attestation registers the device unattested, without a key.
struct IOSAttestHandshake: Handshake {
    let verifier: AttestationVerifier
    let store: any Store
    let time: any TimeSource
    /// DeviceCheck's look-up of the phone's bit 0; nil when DeviceCheck is off (it abstains).
    let deviceCheck: DeviceCheckGate?
    let gate: ProofGate
    /// `[apple.risk]`: a key attested again on a device whose stored risk metric is above the
    /// limit is refused or moved to its tier; nil when off (it abstains).
    var risk: RiskPolicy? = nil

    /// Largest base64 attestation accepted, characters (real ones are about 5–6 KiB).
    static let maxAttestationText = 32 * 1024

    struct Parsed {
        let keyID: [UInt8]
        let deviceID: String
        /// Nil when the body brought no proof (admitted only under `[gate] mode = "off"`).
        let attestation: [UInt8]?
        let challenge: String
        let deviceCheckToken: [UInt8]?
    }

    /// What verification established: the request, and either Apple's attested key and whether
    /// DeviceCheck flagged the phone, or the reason the gate admitted an unverified proof.
    struct Verified {
        let parsed: Parsed
        /// Nil when the proof did not verify and the gate admitted it.
        let attested: AttestedKey?
        let flagged: Bool
        let proof: ProofGate.Outcome
    }

    /// - Throws: `bad_request` (body, `key_id_malformed`, `attestation_malformed`,
    ///   `device_check_token_malformed`, `proof_missing` unless the gate is off).
    func parse(_ body: [UInt8], record: RequestRecord) throws(APIError) -> Parsed {
        record.update { $0.platform = .ios }
        let request = try HandshakeBody.decode(IOSAttestBody.self, from: body)
        let (keyID, deviceID) = try IOSFields.keyID(request.key_id, record: record)
        let attestation = try request.attestation.map { (text) throws(APIError) in
            try IOSFields.blob(text, maxText: Self.maxAttestationText, reason: "attestation_malformed")
        }
        if attestation == nil && !gate.mode.admitsMissingProofs { throw APIError(.badRequest, reason: ProofGate.proofMissing) }
        let token = try request.device_check_token.map { (text) throws(APIError) in
            try IOSFields.blob(text, maxText: DeviceCheckGate.maxTokenText, reason: "device_check_token_malformed")
        }
        return Parsed(keyID: keyID, deviceID: deviceID, attestation: attestation, challenge: request.challenge, deviceCheckToken: token)
    }

    func challenge(of parsed: Parsed) -> String { parsed.challenge }

    /// Apple's attestation, then (when configured) DeviceCheck's bit 0 of the phone. A proof the
    /// gate admits unverified skips DeviceCheck (its token is bound to no verified key).
    /// - Throws: `attestation_invalid` with the verifier's reason (under `enforce`), `bad_request`
    ///   `proof_missing` (not `off`); `forbidden` `devicecheck_flagged`.
    func verify(_ parsed: Parsed, challenge: [UInt8], record: RequestRecord) throws(APIError) -> Verified {
        guard let attestation = parsed.attestation else {
            let reason = try gate.missingProof(route: .attestIOS, record: record)
            return Verified(parsed: parsed, attested: nil, flagged: false, proof: .admitted(reason: reason))
        }
        let attested: AttestedKey
        do {
            attested = try verifier.verify(
                attestation: attestation, keyID: parsed.keyID, clientDataHash: SHA256.hash(challenge), at: time.nowSeconds())
        } catch {
            record.note(.attestation(platform: .ios, outcome: error.reason))
            let reason = try gate.failedProof(APIError(.attestationInvalid, reason: error.reason), route: .attestIOS, record: record)
            return Verified(parsed: parsed, attested: nil, flagged: false, proof: .admitted(reason: reason))
        }
        record.note(.attestation(platform: .ios, outcome: "ok"))
        let flagged = try deviceCheck?.judge(deviceToken: parsed.deviceCheckToken, record: record) ?? false
        return Verified(parsed: parsed, attested: attested, flagged: flagged, proof: .verified)
    }

    /// A verified key registers the device, or makes the unattested device of this key id
    /// attested (its tier leaves `unattested`); an admitted proof registers the device
    /// unattested, or records an existing one unattested.
    /// - Throws: `forbidden` (the key was registered and revoked), `attestation_invalid`
    ///   `device_key_conflict` or `device_platform_conflict`, `unavailable`.
    func register(_ verified: Verified, record: RequestRecord) throws(APIError) -> (deviceID: String, platform: SessionPlatform) {
        let parsed = verified.parsed
        let now = time.nowSeconds()
        guard let attested = verified.attested else {
            let reason: String
            if case .admitted(let admitted) = verified.proof { reason = admitted } else { reason = ProofGate.proofMissing }
            let device = DeviceRecord(
                id: parsed.deviceID, platform: SessionPlatform.ios.rawValue, publicKey: [], counter: 0, environment: "",
                createdAt: now, lastSeenAt: now, tier: DeviceRecord.unattestedTier, attested: false, unattestedReason: reason)
            try UnattestedDevices.register(device, store: store, now: now, record: record)
            return (parsed.deviceID, .ios)
        }
        let tier = verified.flagged ? deviceCheck?.flaggedTier ?? DeviceRecord.defaultTier : DeviceRecord.defaultTier
        let device = DeviceRecord(
            id: parsed.deviceID, platform: SessionPlatform.ios.rawValue, publicKey: attested.publicKey, counter: attested.counter,
            environment: attested.environment.rawValue, createdAt: now, lastSeenAt: now, revoked: false,
            receipt: attested.receipt, appID: attested.appID,
            deviceCheckToken: parsed.deviceCheckToken ?? [], flagged: verified.flagged, tier: tier)
        let outcome: RegisterOutcome
        do { outcome = try store.registerDevice(device) } catch { throw StoreFailure.apiError("device_register", error, record: record) }
        if case .existing(var existing) = outcome {
            guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
            guard existing.platform == SessionPlatform.ios.rawValue else { throw APIError(.attestationInvalid, reason: "device_platform_conflict") }
            if !existing.attested {
                // Admitted earlier without a verified proof: a key that never verified, or the
                // very key this proof verified, moves it to attested.
                guard existing.publicKey.isEmpty || constantTimeEquals(existing.publicKey, attested.publicKey) else {
                    throw APIError(.attestationInvalid, reason: "device_key_conflict")
                }
                if try UnattestedDevices.promote(device, store: store, now: now, record: record) { return (parsed.deviceID, .ios) }
                // Lost a race (revoked, or attested by a concurrent handshake): judge the row as it is now.
                existing = try UnattestedDevices.reread(parsed.deviceID, store: store, record: record)
                guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
            }
            // The same key attested again: only a device that is not revoked, with the very key
            // it registered, may continue; its counter stays where it is.
            guard constantTimeEquals(existing.publicKey, attested.publicKey) else {
                throw APIError(.attestationInvalid, reason: "device_key_conflict")
            }
            try risk?.apply(existing, record: record)
        }
        return (parsed.deviceID, .ios)
    }
}

/// `POST /v1/assert/ios`: an assertion by a registered key over SHA-256(challenge) moves its
/// counter forward. Under `monitor` and `off` a failed (under `off`, a missing) assertion still
/// gets a session, and the device is recorded unattested.
struct IOSAssertHandshake: Handshake {
    let assertions: DeviceAssertions
    let gate: ProofGate
    /// `[apple.risk]`: a device whose stored risk metric is above the limit is refused or moved to
    /// its tier before its session is granted; nil when off (it abstains).
    var risk: RiskPolicy? = nil

    struct Parsed {
        let deviceID: String
        /// Nil when the body brought no proof (admitted only under `[gate] mode = "off"`).
        let assertion: [UInt8]?
        let challenge: String
    }

    /// The device, and the reason the gate admitted an unverified proof (nil: it verified).
    struct Verified {
        let device: DeviceRecord
        let admittedReason: String?
    }

    /// - Throws: `bad_request` (body, `key_id_malformed`, `assertion_malformed`, `proof_missing` unless the gate is off).
    func parse(_ body: [UInt8], record: RequestRecord) throws(APIError) -> Parsed {
        record.update { $0.platform = .ios }
        let request = try HandshakeBody.decode(IOSAssertBody.self, from: body)
        let (_, deviceID) = try IOSFields.keyID(request.key_id, record: record)
        let assertion = try request.assertion.map { (text) throws(APIError) in
            try IOSFields.blob(text, maxText: DeviceAssertions.maxAssertionText, reason: "assertion_malformed")
        }
        if assertion == nil && !gate.mode.admitsMissingProofs { throw APIError(.badRequest, reason: ProofGate.proofMissing) }
        return Parsed(deviceID: deviceID, assertion: assertion, challenge: request.challenge)
    }

    func challenge(of parsed: Parsed) -> String { parsed.challenge }

    /// A device stored without a key (admitted unattested) has nothing to verify an assertion
    /// with: its proof fails with `device_unattested`.
    /// - Throws: `key_unknown` (no device registered with this key id), `attestation_invalid`
    ///   (bad signature, replayed counter, another App ID, `device_unattested`; under `enforce`),
    ///   `forbidden` (revoked), `unavailable`.
    func verify(_ parsed: Parsed, challenge: [UInt8], record: RequestRecord) throws(APIError) -> Verified {
        let device = try assertions.registeredDevice(parsed.deviceID, unknown: .keyUnknown, record: record)
        guard let assertion = parsed.assertion else {
            return Verified(device: device, admittedReason: try gate.missingProof(route: .assertIOS, record: record))
        }
        do throws(APIError) {
            guard !device.publicKey.isEmpty else { throw APIError(.attestationInvalid, reason: "device_unattested") }
            try assertions.verify(assertion, device: device, clientDataHash: SHA256.hash(challenge), kind: .handshake, record: record)
        } catch {
            return Verified(device: device, admittedReason: try gate.failedProof(error, route: .assertIOS, record: record))
        }
        return Verified(device: device, admittedReason: nil)
    }

    /// A verified assertion moved the counter; a device recorded unattested becomes attested again.
    /// An admitted one records the device unattested (an already unattested device keeps its first reason).
    func register(_ verified: Verified, record: RequestRecord) throws(APIError) -> (deviceID: String, platform: SessionPlatform) {
        let device = verified.device
        let now = assertions.time.nowSeconds()
        try risk?.apply(device, record: record)
        if let reason = verified.admittedReason {
            try UnattestedDevices.recordAdmitted(device, reason: reason, store: assertions.store, now: now, record: record)
        } else if !device.attested {
            // Recorded unattested by an earlier admitted proof, and now its attested key signed
            // again: attested once more (its counter already moved; the write never lowers it).
            var proven = device
            proven.attested = true
            proven.unattestedReason = nil
            proven.tier = DeviceRecord.defaultTier
            _ = try UnattestedDevices.promote(proven, store: assertions.store, now: now, record: record)
        }
        return (device.id, .ios)
    }
}

/// Field checks shared by the iOS bodies.
enum IOSFields {
    /// An App Attest key id (base64, 32 bytes) and the device id it names, hex(key id).
    /// - Throws: `bad_request` `key_id_malformed`.
    static func keyID(_ text: String, record: RequestRecord) throws(APIError) -> (keyID: [UInt8], deviceID: String) {
        guard text.utf8.count <= 64, let keyID = Base64.decode(text), keyID.count == 32 else {
            throw APIError(.badRequest, reason: "key_id_malformed")
        }
        let deviceID = Hex.encode(keyID)
        record.update { $0.deviceID = deviceID }
        return (keyID, deviceID)
    }

    /// A non-empty base64 blob of at most `maxText` characters. - Throws: `bad_request` `reason`.
    static func blob(_ text: String, maxText: Int, reason: String) throws(APIError) -> [UInt8] {
        guard text.utf8.count <= maxText, let bytes = Base64.decode(text), !bytes.isEmpty else {
            throw APIError(.badRequest, reason: reason)
        }
        return bytes
    }
}
