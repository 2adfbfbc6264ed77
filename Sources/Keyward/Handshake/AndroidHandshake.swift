import PlayIntegrity
import Sessions
import Store

/// The Android handshake's configuration (`POST /v1/attest/android`): the Play Integrity
/// verifier built from `[android]`. The service runs it as an ``AndroidAttestHandshake``.
public final class AndroidHandshake: Sendable {
    let attestation: AndroidAttestation

    /// Wraps the Play Integrity verifier built from `[android]` (see `AndroidAssembly`).
    public init(attestation: AndroidAttestation) { self.attestation = attestation }
}

/// `POST /v1/attest/android`: a Play Integrity verdict bound to a fresh challenge and the app's
/// install id registers the device hex(SHA256(package ‖ install_id)). Standard mode calls Google,
/// so the router runs it on the blocking executor, never on a loop thread.
struct AndroidAttestHandshake: Handshake {
    let attestation: AndroidAttestation
    let store: any Store
    let time: any TimeSource
    /// Issues the install credential every successful handshake returns.
    let credentials: InstallCredentials
    let gate: ProofGate

    struct Parsed {
        let request: AndroidAttestRequest
        let challenge: String
        /// False when the body brought no integrity token (admitted only under `[gate] mode = "off"`).
        let hasProof: Bool
    }

    /// The request as verified, and the reason the gate admitted an unverified proof (nil: it verified).
    struct Verified {
        let request: AndroidAttestRequest
        let admittedReason: String?
    }

    /// Stands in for the token of a body without one: the install id and package name are
    /// checked as for any other, and the token is never decoded.
    private static let absentToken = "-"

    /// - Throws: `bad_request` (body, token over 16 KiB, install id, package name, `proof_missing` unless the gate is off).
    func parse(_ body: [UInt8], record: RequestRecord) throws(APIError) -> Parsed {
        record.update { $0.platform = .android }
        let fields = try HandshakeBody.decode(AndroidAttestBody.self, from: body)
        if fields.integrity_token == nil && !gate.mode.admitsMissingProofs { throw APIError(.badRequest, reason: ProofGate.proofMissing) }
        let request: AndroidAttestRequest
        do {
            request = try attestation.request(
                integrityToken: fields.integrity_token ?? Self.absentToken, installID: fields.install_id, packageName: fields.package_name)
        } catch {
            throw Self.apiError(error)
        }
        record.update { $0.deviceID = request.deviceID }
        return Parsed(request: request, challenge: fields.challenge, hasProof: fields.integrity_token != nil)
    }

    func challenge(of parsed: Parsed) -> String { parsed.challenge }

    /// A refused verdict is a failed proof (the gate may admit it); Google, budget and store
    /// failures are not.
    /// - Throws: `attestation_invalid` (verdict refused, under `enforce`), `rate_limited` (daily
    ///   decode budget), `upstream_error` (Google), `internal_error`, `unavailable`.
    func verify(_ parsed: Parsed, challenge: [UInt8], record: RequestRecord) throws(APIError) -> Verified {
        guard parsed.hasProof else {
            return Verified(request: parsed.request, admittedReason: try gate.missingProof(route: .attestAndroid, record: record))
        }
        let decodes = attestation.settings.mode == .standard
        do {
            _ = try attestation.verify(parsed.request, challenge: challenge, nowMillis: time.nowMillis(), store: store)
        } catch {
            record.note(.attestation(platform: .android, outcome: error.reason))
            if decodes, let outcome = MetricEvent.DecodeOutcome(error) { record.note(.decode(outcome)) }
            if error.code == .rateLimited { record.note(.rateLimited(.decodeBudget)) }
            let reason = try gate.failedProof(Self.apiError(error), route: .attestAndroid, record: record)
            return Verified(request: parsed.request, admittedReason: reason)
        }
        record.note(.attestation(platform: .android, outcome: "ok"))
        if decodes { record.note(.decode(.ok)) }
        return Verified(request: parsed.request, admittedReason: nil)
    }

    /// A verified verdict registers the device, or makes the unattested device of this install
    /// attested (its tier leaves `unattested`); an admitted proof registers it unattested, or
    /// records an existing one unattested.
    /// - Throws: `forbidden` (device revoked), `attestation_invalid` `device_platform_conflict`, `unavailable`.
    func register(_ verified: Verified, record: RequestRecord) throws(APIError) -> (deviceID: String, platform: SessionPlatform) {
        let request = verified.request
        let now = time.nowSeconds()
        var device = attestation.deviceRecord(for: request, now: now)
        if let reason = verified.admittedReason {
            device.attested = false
            device.unattestedReason = reason
            device.tier = DeviceRecord.unattestedTier
            try UnattestedDevices.register(device, store: store, now: now, record: record)
            return (request.deviceID, .android)
        }
        let outcome: RegisterOutcome
        do { outcome = try store.registerDevice(device) } catch {
            throw StoreFailure.apiError("device_register", error, record: record)
        }
        if case .existing(let existing) = outcome {
            guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
            guard existing.platform == SessionPlatform.android.rawValue else { throw APIError(.attestationInvalid, reason: "device_platform_conflict") }
            if !existing.attested, try UnattestedDevices.promote(device, store: store, now: now, record: record) {
                return (request.deviceID, .android)
            }
            _ = try? store.markSeen(deviceID: request.deviceID, now: now)
        }
        return (request.deviceID, .android)
    }

    /// The first install credential of a new chain, for `/v1/refresh`.
    /// - Throws: `unavailable` when the store cannot take it.
    func grantExtras(deviceID: String, record: RequestRecord) throws(APIError) -> String {
        try credentials.issue(deviceID: deviceID, record: record).jsonFields
    }

    /// The API error for an Android refusal; `Retry-After` on the budget's 429.
    static func apiError(_ failure: AndroidAttestFailure) -> APIError {
        if failure.code == .rateLimited {
            return .rateLimited(reason: failure.reason, retryAfterSeconds: failure.retryAfterSeconds ?? 3600)
        }
        if failure.code == .unavailable { return .unavailable(reason: failure.reason) }
        return APIError(APIErrorCode(rawValue: failure.code.rawValue) ?? .internalError, reason: failure.reason)
    }
}
