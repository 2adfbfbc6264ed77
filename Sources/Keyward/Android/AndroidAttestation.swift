import PlayIntegrity
import Sessions
import Store

/// Everything Android in `POST /v1/attest/android` except HTTP, the challenge and the session: the
/// route validates the body with ``request(integrityToken:installID:packageName:)``, spends the
/// challenge, then calls ``verify(_:challenge:nowMillis:store:)`` and registers the device it returns.
///
/// Verification order (cheapest and least shared first):
/// - classic: decrypt + verify the token locally → verdict policy.
/// - standard: Keyward's OAuth token → the device's daily decode budget → the deployment's daily
///   decode budget → `decodeIntegrityToken` → verdict policy. The budgets are spent only once
///   Keyward's own checks passed and its token is in hand, so neither junk requests refused for free
///   nor Keyward's misconfiguration burn them.
public final class AndroidAttestation: Sendable {
    enum Decoder: Sendable {
        case standard(StandardIntegrityClient)
        case classic(ClassicTokenDecoder)
    }

    /// The validated `[android]` settings this verifier was built from.
    public let settings: AndroidSettings
    let policy: VerdictPolicy
    let decoder: Decoder

    /// Builds the decoder the configured mode needs.
    /// - Parameters:
    ///   - settings: the validated `[android]` settings.
    ///   - secrets: the secrets of the same mode.
    ///   - http: how to reach Google (standard mode); unused in classic mode.
    /// - Throws: `PlayIntegrityError.misconfigured`: `android_secrets_mismatch` (secrets of the other mode),
    ///   `classic_decryption_key_invalid`, `classic_verification_key_invalid`.
    public init(settings: AndroidSettings, secrets: AndroidSecrets, http: any PlayIntegrityHTTPClient) throws(PlayIntegrityError) {
        self.settings = settings
        policy = VerdictPolicy(
            packageNames: settings.packageNames, certificateDigests: settings.certificateDigests, deviceRequirement: settings.deviceIntegrity,
            requireLicensed: settings.requireLicensed, maxAgeMillis: Int64(settings.freshnessSeconds) * 1_000)
        switch (settings.mode, secrets) {
        case (.standard, .standard(let serviceAccount)):
            decoder = .standard(StandardIntegrityClient(endpoints: settings.google, serviceAccount: serviceAccount, http: http))
        case (.classic, .classic(let decryptionKey, let verificationKey)):
            decoder = .classic(ClassicTokenDecoder(keys: try ClassicIntegrityKeys(decryptionKeyBase64: decryptionKey, verificationKeyBase64: verificationKey)))
        default:
            throw .misconfigured(reason: "android_secrets_mismatch", detail: "the Android secrets given are not those of the configured \(settings.mode.rawValue) mode")
        }
    }

    /// The body's fields, checked without I/O (see ``AndroidAttestRequest``).
    /// - Throws: `bad_request` with the field's slug.
    public func request(integrityToken: String, installID: String, packageName: String?) throws(AndroidAttestFailure) -> AndroidAttestRequest {
        try AndroidAttestRequest(integrityToken: integrityToken, installID: installID, packageName: packageName, configuredPackages: settings.packageNames)
    }

    /// Decodes and judges the token. Call only after the challenge was spent.
    /// - Parameters:
    ///   - challenge: the spent challenge's bytes.
    ///   - nowMillis: Unix milliseconds (freshness, OAuth token cache, budget day).
    ///   - store: holds the daily decode budgets (standard mode).
    /// - Returns: the accepted verdict; the device id is `request.deviceID`.
    /// - Throws: `attestation_invalid` (the verdict or token was refused; PlayIntegrity's slug),
    ///   `rate_limited` `decode_budget_exhausted` or `decode_budget_total_exhausted` (with
    ///   `retryAfterSeconds`, until the next UTC day; a decode Google refuses with 401
    ///   is retried once with a fresh access token, on the same budget unit), `upstream_error` (Google
    ///   unreachable, 5xx, quota), `internal_error` (Keyward's service account or keys refused),
    ///   `unavailable` `budget_store` (the store failed).
    public func verify(_ request: AndroidAttestRequest, challenge: [UInt8], nowMillis: Int64, store: any Store) throws(AndroidAttestFailure) -> AcceptedIntegrityVerdict {
        let mode: IntegrityMode
        let verdict: IntegrityVerdict
        do {
            switch decoder {
            case .classic(let classic):
                mode = .classic
                verdict = try classic.decode(request.integrityToken)
            case .standard(let client):
                mode = .standard
                let now = Self.floorDiv(nowMillis, 1_000)
                let authorization = try client.authorize(now: now)
                try spendBudget(deviceID: request.deviceID, nowMillis: nowMillis, store: store)
                do {
                    verdict = try client.decode(integrityToken: request.integrityToken, packageName: request.packageName, authorization: authorization)
                } catch where error.reason == "google_unauthorized" {
                    // Google no longer takes the cached access token (revoked or expired early); the client
                    // dropped it. One retry with a fresh one, on the budget unit already spent: the device
                    // is not to blame.
                    let fresh = try client.authorize(now: now)
                    verdict = try client.decode(integrityToken: request.integrityToken, packageName: request.packageName, authorization: fresh)
                }
            }
            let expectation = VerdictExpectation(
                binding: IntegrityBinding.value(challenge: challenge, installID: request.installID), packageName: request.packageName, mode: mode)
            return try policy.verify(verdict, expecting: expectation, nowMillis: nowMillis)
        } catch {
            throw Self.failure(error)
        }
    }

    /// The device row to register for an accepted request: no key, counter 0, the mode as environment.
    public func deviceRecord(for request: AndroidAttestRequest, now: Int64) -> DeviceRecord {
        DeviceRecord(id: request.deviceID, platform: SessionPlatform.android.rawValue, publicKey: [], counter: 0, environment: settings.mode.rawValue,
                     createdAt: now, lastSeenAt: now)
    }

    // MARK: helpers

    /// Budget key in the store's daily budgets.
    static func budgetKey(deviceID: String) -> String { "playintegrity:" + deviceID }
    /// The deployment's budget key (device ids are hex, so it never names a device).
    static let totalBudgetKey = "playintegrity-total"

    private func spendBudget(deviceID: String, nowMillis: Int64, store: any Store) throws(BudgetFailure) {
        let day = Self.floorDiv(nowMillis, 86_400_000)
        let allowed: Bool
        do {
            allowed = try store.consumeBudget(key: Self.budgetKey(deviceID: deviceID), day: day, limit: settings.decodeBudgetPerDay)
        } catch {
            throw .storeFailed
        }
        let untilTomorrow = Int(max(1, ((day + 1) * 86_400_000 - nowMillis + 999) / 1_000))
        guard allowed else { throw .exhausted(retryAfterSeconds: untilTomorrow) }
        guard let total = settings.decodeBudgetPerDayTotal else { return }
        // One conditional upsert on one row: exact however many instances share the store.
        let totalAllowed: Bool
        do {
            totalAllowed = try store.consumeBudget(key: Self.totalBudgetKey, day: day, limit: total)
        } catch {
            throw .storeFailed
        }
        guard totalAllowed else { throw .totalExhausted(retryAfterSeconds: untilTomorrow) }
    }

    enum BudgetFailure: Error {
        case exhausted(retryAfterSeconds: Int)
        case totalExhausted(retryAfterSeconds: Int)
        case storeFailed
    }

    static func failure(_ error: any Error) -> AndroidAttestFailure {
        switch error {
        case let error as PlayIntegrityError:
            switch error {
            case .rejected(let reason, _): return AndroidAttestFailure(.attestationInvalid, reason: reason)
            case .googleUnavailable(let reason, _): return AndroidAttestFailure(.upstreamError, reason: reason)
            case .misconfigured(let reason, _): return AndroidAttestFailure(.internalError, reason: reason)
            }
        case BudgetFailure.exhausted(let retryAfter):
            return AndroidAttestFailure(.rateLimited, reason: "decode_budget_exhausted", retryAfterSeconds: retryAfter)
        case BudgetFailure.totalExhausted(let retryAfter):
            return AndroidAttestFailure(.rateLimited, reason: "decode_budget_total_exhausted", retryAfterSeconds: retryAfter)
        default:
            return AndroidAttestFailure(.unavailable, reason: "budget_store")
        }
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor < 0) ? quotient - 1 : quotient
    }
}
