import AppAttest
import KeywardCrypto
import Sessions
import Store

/// The iOS handshake: App Attest attestation registers a key, an assertion proves it again.
/// clientDataHash is SHA-256 of the challenge bytes (Keyward's client convention, README).
extension KeywardService {
    /// Largest base64 attestation accepted, characters (real ones are about 5–6 KiB).
    static let maxAttestationText = 32 * 1024
    /// Largest base64 assertion accepted, characters (real ones are about 200 bytes).
    static let maxAssertionText = 4 * 1024

    /// `POST /v1/attest/ios`: verify Apple's attestation of `key_id` over SHA-256(challenge), register
    /// the device (id = hex(key_id)) with counter 0, and grant a session.
    /// - Throws: `bad_request`, `challenge_invalid`, `attestation_invalid`, `forbidden` (the key was
    ///   registered and revoked), `not_implemented` (iOS not configured), `unavailable`.
    func attestIOS(body: [UInt8], context: RequestRecord) throws(APIError) -> String {
        guard let verifier = attestationVerifier else { throw APIError(.notImplemented, reason: "ios_not_configured") }
        context.update { $0.platform = "ios" }
        let request = try HandshakeBody.decode(IOSAttestBody.self, from: body)
        let (keyID, deviceID) = try decodeKeyID(request.key_id, context: context)
        let attestation = try decodeBlob(request.attestation, maxText: KeywardService.maxAttestationText, reason: "attestation_malformed")

        let challenge = try spendChallenge(request.challenge)
        let attested: AttestedKey
        do {
            attested = try verifier.verify(
                attestation: attestation, keyID: keyID, clientDataHash: SHA256.hash(challenge), at: time.nowSeconds())
        } catch {
            metrics.increment("keyward_attestations_total", ["platform": "ios", "outcome": error.reason])
            throw APIError(.attestationInvalid, reason: error.reason)
        }
        metrics.increment("keyward_attestations_total", ["platform": "ios", "outcome": "ok"])

        let now = time.nowSeconds()
        let record = DeviceRecord(
            id: deviceID, platform: "ios", publicKey: attested.publicKey, counter: attested.counter,
            environment: attested.environment.rawValue, createdAt: now, lastSeenAt: now, revoked: false,
            receipt: attested.receipt)
        let outcome: RegisterOutcome
        do { outcome = try store.registerDevice(record) } catch { throw storeFailure("device_register", error) }
        if case .existing(let existing) = outcome {
            // The same key attested again: only a device that is not revoked, with the very key
            // it registered, may continue; its counter stays where it is.
            guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
            guard constantTimeEquals(existing.publicKey, attested.publicKey) else {
                throw APIError(.attestationInvalid, reason: "device_key_conflict")
            }
        }
        return try grantSession(deviceID: deviceID, platform: .ios, context: context)
    }

    /// `POST /v1/assert/ios`: verify an assertion by a registered key over SHA-256(challenge),
    /// advance its counter by compare-and-set, and grant a session.
    /// - Throws: `bad_request`, `challenge_invalid`, `attestation_invalid` (bad signature, replayed
    ///   counter, unknown key), `forbidden` (revoked), `not_implemented`, `unavailable`.
    func assertIOS(body: [UInt8], context: RequestRecord) throws(APIError) -> String {
        guard let verifier = assertionVerifier else { throw APIError(.notImplemented, reason: "ios_not_configured") }
        context.update { $0.platform = "ios" }
        let request = try HandshakeBody.decode(IOSAssertBody.self, from: body)
        let (_, deviceID) = try decodeKeyID(request.key_id, context: context)
        let assertion = try decodeBlob(request.assertion, maxText: KeywardService.maxAssertionText, reason: "assertion_malformed")

        let challenge = try spendChallenge(request.challenge)
        let device = try registeredDevice(deviceID, platform: "ios")
        try verifyAssertion(
            assertion, device: device, clientDataHash: SHA256.hash(challenge), verifier: verifier, outcomeLabel: "handshake")
        return try grantSession(deviceID: deviceID, platform: .ios, context: context)
    }

    /// An App Attest key id (base64, 32 bytes) and the device id it names, hex(key id).
    /// - Throws: `bad_request` `key_id_malformed`.
    func decodeKeyID(_ text: String, context: RequestRecord) throws(APIError) -> (keyID: [UInt8], deviceID: String) {
        guard text.utf8.count <= 64, let keyID = Base64.decode(text), keyID.count == 32 else {
            throw APIError(.badRequest, reason: "key_id_malformed")
        }
        let deviceID = Hex.encode(keyID)
        context.update { $0.deviceID = deviceID }
        return (keyID, deviceID)
    }

    /// A non-empty base64 blob of at most `maxText` characters. - Throws: `bad_request` `reason`.
    func decodeBlob(_ text: String, maxText: Int, reason: String) throws(APIError) -> [UInt8] {
        guard text.utf8.count <= maxText, let bytes = Base64.decode(text), !bytes.isEmpty else {
            throw APIError(.badRequest, reason: reason)
        }
        return bytes
    }

    /// The registered, unrevoked device `deviceID` of `platform`.
    /// - Throws: `attestation_invalid` (unknown), `forbidden` (revoked), `unavailable`.
    func registeredDevice(_ deviceID: String, platform: String) throws(APIError) -> DeviceRecord {
        let found: DeviceRecord?
        do { found = try store.device(id: deviceID) } catch { throw storeFailure("device_read", error) }
        guard let device = found, device.platform == platform else {
            throw APIError(.attestationInvalid, reason: "device_unknown")
        }
        guard !device.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
        return device
    }

    /// Verifies an assertion by `device`'s key and moves its counter forward by compare-and-set on
    /// that same key: two racing submissions of one assertion yield exactly one success.
    /// - Throws: `attestation_invalid` with the verifier's reason, or `counter_replay` when the
    ///   compare-and-set loses; `unavailable`.
    func verifyAssertion(
        _ assertion: [UInt8], device: DeviceRecord, clientDataHash: [UInt8], verifier: AssertionVerifier,
        outcomeLabel: String
    ) throws(APIError) {
        let newCounter: UInt32
        do {
            newCounter = try verifier.verify(
                assertion: assertion, publicKey: device.publicKey, clientDataHash: clientDataHash,
                storedCounter: device.counter, appID: nil)
        } catch {
            metrics.increment("keyward_assertions_total", ["kind": outcomeLabel, "outcome": error.reason])
            throw APIError(.attestationInvalid, reason: error.reason)
        }
        let advanced: Bool
        do {
            advanced = try store.advanceCounter(
                deviceID: device.id, publicKey: device.publicKey, to: newCounter, now: time.nowSeconds())
        } catch {
            throw storeFailure("counter_advance", error)
        }
        guard advanced else {
            metrics.increment("keyward_assertions_total", ["kind": outcomeLabel, "outcome": "counter_replay"])
            throw APIError(.attestationInvalid, reason: "counter_replay")
        }
        metrics.increment("keyward_assertions_total", ["kind": outcomeLabel, "outcome": "ok"])
    }
}
