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

    struct Parsed {
        let request: AndroidAttestRequest
        let challenge: String
    }

    /// - Throws: `bad_request` (body, token over 16 KiB, install id, package name).
    func parse(_ body: [UInt8], record: RequestRecord) throws(APIError) -> Parsed {
        record.update { $0.platform = .android }
        let fields = try HandshakeBody.decode(AndroidAttestBody.self, from: body)
        let request: AndroidAttestRequest
        do {
            request = try attestation.request(integrityToken: fields.integrity_token, installID: fields.install_id, packageName: fields.package_name)
        } catch {
            throw Self.apiError(error)
        }
        record.update { $0.deviceID = request.deviceID }
        return Parsed(request: request, challenge: fields.challenge)
    }

    func challenge(of parsed: Parsed) -> String { parsed.challenge }

    /// - Throws: `attestation_invalid` (verdict refused), `rate_limited` (daily decode budget),
    ///   `upstream_error` (Google), `internal_error`, `unavailable`.
    func verify(_ parsed: Parsed, challenge: [UInt8], record: RequestRecord) throws(APIError) -> AndroidAttestRequest {
        let decodes = attestation.settings.mode == .standard
        do {
            _ = try attestation.verify(parsed.request, challenge: challenge, nowMillis: time.nowMillis(), store: store)
        } catch {
            record.note(.attestation(platform: .android, outcome: error.reason))
            if decodes, let outcome = MetricEvent.DecodeOutcome(error) { record.note(.decode(outcome)) }
            if error.code == .rateLimited { record.note(.rateLimited(.decodeBudget)) }
            throw Self.apiError(error)
        }
        record.note(.attestation(platform: .android, outcome: "ok"))
        if decodes { record.note(.decode(.ok)) }
        return parsed.request
    }

    /// - Throws: `forbidden` (device revoked), `attestation_invalid` `device_platform_conflict`, `unavailable`.
    func register(_ request: AndroidAttestRequest, record: RequestRecord) throws(APIError) -> (deviceID: String, platform: SessionPlatform) {
        let now = time.nowSeconds()
        let outcome: RegisterOutcome
        do { outcome = try store.registerDevice(attestation.deviceRecord(for: request, now: now)) } catch {
            throw StoreFailure.apiError("device_register", error, record: record)
        }
        if case .existing(let existing) = outcome {
            guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
            guard existing.platform == SessionPlatform.android.rawValue else { throw APIError(.attestationInvalid, reason: "device_platform_conflict") }
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
