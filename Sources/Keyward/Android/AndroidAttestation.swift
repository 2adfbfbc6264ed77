import PlayIntegrity
import Store

/// Everything Android in `POST /v1/attest/android` except HTTP, the challenge and the session: the
/// route validates the body with ``request(integrityToken:installID:packageName:)``, spends the
/// challenge, then calls ``verify(_:challenge:nowMillis:store:)`` and registers the device it returns.
///
/// Verification order (issue 5):
/// - classic: decrypt + verify the token locally → verdict policy.
/// - standard: Keyward's OAuth token → the device's daily decode budget → `decodeIntegrityToken` →
///   verdict policy. The budget is spent only once Keyward's own token is in hand, so Keyward's
///   misconfiguration never burns a device's budget.
public final class AndroidAttestation: Sendable {
    enum Decoder: Sendable {
        case standard(StandardIntegrityClient)
        case classic(ClassicTokenDecoder)
    }

    public let settings: AndroidSettings
    let policy: VerdictPolicy
    let decoder: Decoder

    /// Validates the settings and builds the decoders.
    /// - Parameter http: how to reach Google (standard mode); unused in classic mode.
    /// - Throws: `PlayIntegrityError.misconfigured` naming the bad setting: `android_packages_invalid`
    ///   (none, or not an Android application id), `certificate_digest_invalid` (none, or not a 32-byte
    ///   digest), `classic_decryption_key_invalid`, `classic_verification_key_invalid`, `android_limits_invalid`.
    public init(settings: AndroidSettings, http: any PlayIntegrityHTTPClient) throws(PlayIntegrityError) {
        guard !settings.packageNames.isEmpty, settings.packageNames.allSatisfy(Self.isApplicationID) else {
            throw .misconfigured(reason: "android_packages_invalid", detail: "android package names must be Android application ids, at least one")
        }
        guard !settings.certificateDigests.isEmpty else {
            throw .misconfigured(reason: "certificate_digest_invalid", detail: "at least one signing-certificate digest is needed")
        }
        var digests: [[UInt8]] = []
        for text in settings.certificateDigests { digests.append(try CertificateDigest.configured(text)) }
        guard (1...3600).contains(settings.maxAgeSeconds), settings.dailyDecodeBudget >= 1 else {
            throw .misconfigured(reason: "android_limits_invalid", detail: "max age must be 1–3600 s and the daily decode budget at least 1")
        }
        self.settings = settings
        policy = VerdictPolicy(
            packageNames: settings.packageNames, certificateDigests: digests, deviceRequirement: settings.deviceRequirement,
            requireLicensed: settings.requireLicensed, maxAgeMillis: settings.maxAgeSeconds * 1_000)
        switch settings.mode {
        case .standard(let serviceAccount, let endpoints):
            decoder = .standard(StandardIntegrityClient(endpoints: endpoints, serviceAccount: serviceAccount, http: http))
        case .classic(let decryptionKey, let verificationKey):
            decoder = .classic(ClassicTokenDecoder(keys: try ClassicIntegrityKeys(decryptionKeyBase64: decryptionKey, verificationKeyBase64: verificationKey)))
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
    ///   `rate_limited` `decode_budget_exhausted` (with `retryAfterSeconds`), `upstream_error` (Google
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
                let authorization = try client.authorize(now: Self.floorDiv(nowMillis, 1_000))
                try spendBudget(deviceID: request.deviceID, nowMillis: nowMillis, store: store)
                verdict = try client.decode(integrityToken: request.integrityToken, packageName: request.packageName, authorization: authorization)
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
        DeviceRecord(id: request.deviceID, platform: "android", publicKey: [], counter: 0, environment: settings.mode.name,
                     createdAt: now, lastSeenAt: now)
    }

    // MARK: helpers

    /// Budget key in the store's daily budgets.
    static func budgetKey(deviceID: String) -> String { "playintegrity:" + deviceID }

    private func spendBudget(deviceID: String, nowMillis: Int64, store: any Store) throws(BudgetFailure) {
        let day = Self.floorDiv(nowMillis, 86_400_000)
        let allowed: Bool
        do {
            allowed = try store.consumeBudget(key: Self.budgetKey(deviceID: deviceID), day: day, limit: settings.dailyDecodeBudget)
        } catch {
            throw .storeFailed
        }
        guard allowed else {
            let untilTomorrow = (day + 1) * 86_400_000 - nowMillis
            throw .exhausted(retryAfterSeconds: Int(max(1, (untilTomorrow + 999) / 1_000)))
        }
    }

    enum BudgetFailure: Error {
        case exhausted(retryAfterSeconds: Int)
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
        default:
            return AndroidAttestFailure(.unavailable, reason: "budget_store")
        }
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor < 0) ? quotient - 1 : quotient
    }

    /// Android application ids: two or more dot-separated segments of ASCII letters, digits and `_`,
    /// each starting with a letter (Android, "Configure the app module", application ID).
    static func isApplicationID(_ name: String) -> Bool {
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        return segments.count >= 2 && name.utf8.count <= 255 && segments.allSatisfy { segment in
            guard let first = segment.utf8.first, (first | 0x20) >= UInt8(ascii: "a"), (first | 0x20) <= UInt8(ascii: "z") else { return false }
            return segment.utf8.allSatisfy { byte in
                let lower = byte | 0x20
                return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
            }
        }
    }
}
