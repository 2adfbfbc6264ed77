import AppAttest
import KeywardCrypto
import Sessions
import Store

/// The iOS handshakes. clientDataHash is SHA-256 of the challenge bytes (Keyward's client
/// convention, README); the device id is hex(key id).

/// `POST /v1/attest/ios`: Apple's attestation of `key_id` registers the device with its key,
/// counter 0 and the App ID it attested for.
struct IOSAttestHandshake: Handshake {
    let verifier: AttestationVerifier
    let store: any Store
    let time: any TimeSource
    /// DeviceCheck's look-up of the phone's bit 0; nil when DeviceCheck is off (it abstains).
    let deviceCheck: DeviceCheckGate?

    /// Largest base64 attestation accepted, characters (real ones are about 5–6 KiB).
    static let maxAttestationText = 32 * 1024

    struct Parsed {
        let keyID: [UInt8]
        let deviceID: String
        let attestation: [UInt8]
        let challenge: String
        let deviceCheckToken: [UInt8]?
    }

    /// What verification established: the request, Apple's attested key, and whether DeviceCheck
    /// flagged the phone.
    struct Verified {
        let parsed: Parsed
        let attested: AttestedKey
        let flagged: Bool
    }

    /// - Throws: `bad_request` (body, `key_id_malformed`, `attestation_malformed`, `device_check_token_malformed`).
    func parse(_ body: [UInt8], record: RequestRecord) throws(APIError) -> Parsed {
        record.update { $0.platform = .ios }
        let request = try HandshakeBody.decode(IOSAttestBody.self, from: body)
        let (keyID, deviceID) = try IOSFields.keyID(request.key_id, record: record)
        let attestation = try IOSFields.blob(request.attestation, maxText: Self.maxAttestationText, reason: "attestation_malformed")
        let token = try request.device_check_token.map { (text) throws(APIError) in
            try IOSFields.blob(text, maxText: DeviceCheckGate.maxTokenText, reason: "device_check_token_malformed")
        }
        return Parsed(keyID: keyID, deviceID: deviceID, attestation: attestation, challenge: request.challenge, deviceCheckToken: token)
    }

    func challenge(of parsed: Parsed) -> String { parsed.challenge }

    /// Apple's attestation, then (when configured) DeviceCheck's bit 0 of the phone.
    /// - Throws: `attestation_invalid` with the verifier's reason; `forbidden` `devicecheck_flagged`.
    func verify(_ parsed: Parsed, challenge: [UInt8], record: RequestRecord) throws(APIError) -> Verified {
        let attested: AttestedKey
        do {
            attested = try verifier.verify(
                attestation: parsed.attestation, keyID: parsed.keyID, clientDataHash: SHA256.hash(challenge), at: time.nowSeconds())
        } catch {
            record.note(.attestation(platform: .ios, outcome: error.reason))
            throw APIError(.attestationInvalid, reason: error.reason)
        }
        record.note(.attestation(platform: .ios, outcome: "ok"))
        let flagged = try deviceCheck?.judge(deviceToken: parsed.deviceCheckToken, record: record) ?? false
        return Verified(parsed: parsed, attested: attested, flagged: flagged)
    }

    /// - Throws: `forbidden` (the key was registered and revoked), `attestation_invalid`
    ///   `device_key_conflict`, `unavailable`.
    func register(_ verified: Verified, record: RequestRecord) throws(APIError) -> (deviceID: String, platform: SessionPlatform) {
        let (parsed, attested) = (verified.parsed, verified.attested)
        let now = time.nowSeconds()
        let device = DeviceRecord(
            id: parsed.deviceID, platform: SessionPlatform.ios.rawValue, publicKey: attested.publicKey, counter: attested.counter,
            environment: attested.environment.rawValue, createdAt: now, lastSeenAt: now, revoked: false,
            receipt: attested.receipt, appID: attested.appID,
            deviceCheckToken: parsed.deviceCheckToken ?? [], flagged: verified.flagged,
            tier: verified.flagged ? deviceCheck?.flaggedTier ?? DeviceRecord.defaultTier : DeviceRecord.defaultTier)
        let outcome: RegisterOutcome
        do { outcome = try store.registerDevice(device) } catch { throw StoreFailure.apiError("device_register", error, record: record) }
        if case .existing(let existing) = outcome {
            // The same key attested again: only a device that is not revoked, with the very key
            // it registered, may continue; its counter stays where it is.
            guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
            guard constantTimeEquals(existing.publicKey, attested.publicKey) else {
                throw APIError(.attestationInvalid, reason: "device_key_conflict")
            }
        }
        return (parsed.deviceID, .ios)
    }
}

/// `POST /v1/assert/ios`: an assertion by a registered key over SHA-256(challenge) moves its
/// counter forward.
struct IOSAssertHandshake: Handshake {
    let assertions: DeviceAssertions

    struct Parsed {
        let deviceID: String
        let assertion: [UInt8]
        let challenge: String
    }

    /// - Throws: `bad_request` (body, `key_id_malformed`, `assertion_malformed`).
    func parse(_ body: [UInt8], record: RequestRecord) throws(APIError) -> Parsed {
        record.update { $0.platform = .ios }
        let request = try HandshakeBody.decode(IOSAssertBody.self, from: body)
        let (_, deviceID) = try IOSFields.keyID(request.key_id, record: record)
        let assertion = try IOSFields.blob(request.assertion, maxText: DeviceAssertions.maxAssertionText, reason: "assertion_malformed")
        return Parsed(deviceID: deviceID, assertion: assertion, challenge: request.challenge)
    }

    func challenge(of parsed: Parsed) -> String { parsed.challenge }

    /// - Throws: `key_unknown` (no device registered with this key id), `attestation_invalid`
    ///   (bad signature, replayed counter, another App ID), `forbidden` (revoked), `unavailable`.
    func verify(_ parsed: Parsed, challenge: [UInt8], record: RequestRecord) throws(APIError) -> String {
        let device = try assertions.registeredDevice(parsed.deviceID, unknown: .keyUnknown, record: record)
        try assertions.verify(parsed.assertion, device: device, clientDataHash: SHA256.hash(challenge), kind: .handshake, record: record)
        return parsed.deviceID
    }

    /// The counter moved with the verification; nothing more to record.
    func register(_ deviceID: String, record: RequestRecord) throws(APIError) -> (deviceID: String, platform: SessionPlatform) {
        (deviceID, .ios)
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
