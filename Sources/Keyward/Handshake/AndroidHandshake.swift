import Foundation
import PlayIntegrity
import Sessions
import Store
import Upstream

/// The Android handshake (`POST /v1/attest/android`): a Play Integrity verdict bound
/// to a fresh challenge and the app's install id → a session for hex(SHA256(package ‖ install_id)).
public final class AndroidHandshake: Sendable {
    let attestation: AndroidAttestation

    /// Wraps the Play Integrity verifier built from `[android]` (see `AndroidAssembly`).
    public init(attestation: AndroidAttestation) { self.attestation = attestation }

    /// - Throws: `bad_request` (body, token over 16 KiB, install id), `challenge_invalid`,
    ///   `attestation_invalid` (verdict refused), `rate_limited` (daily decode budget),
    ///   `forbidden` (device revoked), `upstream_error` (Google), `internal_error`, `unavailable`.
    func attest(body: [UInt8], service: KeywardService, context: RequestRecord) throws(APIError) -> String {
        context.update { $0.platform = "android" }
        let fields = try HandshakeBody.decode(AndroidAttestBody.self, from: body)
        let request: AndroidAttestRequest
        do {
            request = try attestation.request(integrityToken: fields.integrity_token, installID: fields.install_id, packageName: fields.package_name)
        } catch {
            throw Self.apiError(error)
        }
        context.update { $0.deviceID = request.deviceID }
        let challenge = try service.spendChallenge(fields.challenge)
        do {
            _ = try attestation.verify(request, challenge: challenge, nowMillis: service.time.nowMillis(), store: service.store)
        } catch {
            service.metrics.increment("keyward_attestations_total", ["platform": "android", "outcome": error.reason])
            throw Self.apiError(error)
        }
        service.metrics.increment("keyward_attestations_total", ["platform": "android", "outcome": "ok"])
        let now = service.time.nowSeconds()
        let outcome: RegisterOutcome
        do { outcome = try service.store.registerDevice(attestation.deviceRecord(for: request, now: now)) } catch {
            throw service.storeFailure("device_register", error)
        }
        if case .existing(let existing) = outcome {
            guard !existing.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
            guard existing.platform == "android" else { throw APIError(.attestationInvalid, reason: "device_platform_conflict") }
            _ = try? service.store.markSeen(deviceID: request.deviceID, now: now)
        }
        return try service.grantSession(deviceID: request.deviceID, platform: .android, context: context)
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

/// Builds the Android handshake `keyward.toml` asks for, with its secrets.
public enum AndroidAssembly {
    /// Standard mode: the Google service account's JSON key file (its content).
    public static let serviceAccountSecret = "KEYWARD_GOOGLE_SERVICE_ACCOUNT"
    /// Classic mode: the base64 AES-256 response decryption key from Play Console.
    public static let decryptionKeySecret = "KEYWARD_PLAY_DECRYPTION_KEY"
    /// Classic mode: the base64 SubjectPublicKeyInfo response verification key from Play Console.
    public static let verificationKeySecret = "KEYWARD_PLAY_VERIFICATION_KEY"

    /// Nil when Android is not configured (its route answers 501).
    /// - Throws: `ServiceAssembly.Problem` naming a missing secret or a refused key.
    public static func handshake(
        _ configuration: KeywardConfiguration, secrets: SecretSource, upstream: UpstreamClient
    ) throws(ServiceAssembly.Problem) -> AndroidHandshake? {
        guard let settings = configuration.android else { return nil }
        let androidSecrets: AndroidSecrets
        do {
            switch settings.mode {
            case .standard:
                _ = try secrets.value(serviceAccountSecret)  // present at start; re-read on every token fetch
                androidSecrets = .standard(serviceAccount: {
                    Array(try SecretSource().value(serviceAccountSecret).utf8)
                })
            case .classic:
                androidSecrets = .classic(
                    decryptionKeyBase64: try secrets.value(decryptionKeySecret),
                    verificationKeyBase64: try secrets.value(verificationKeySecret))
            }
        } catch {
            throw ServiceAssembly.Problem("android: \(error.description)")
        }
        do {
            let attestation = try AndroidAttestation(
                settings: settings, secrets: androidSecrets, http: UpstreamGoogleHTTPClient(upstream: upstream))
            return AndroidHandshake(attestation: attestation)
        } catch {
            throw ServiceAssembly.Problem("android: \(error)")
        }
    }
}
