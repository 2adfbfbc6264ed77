import Foundation
import KeywardCrypto

/// Verifies session tokens (RFC 7519 §7.2, with the RFC 8725 best practices) against a key set.
///
/// Checks, in order, each refusal with its ``SessionError/Kind``:
/// 1. shape: at most ``maxTokenBytes``, three unpadded base64url segments, JSON header with no
///    duplicate member names, no byte-order mark and only integer numbers (`token_malformed`);
/// 2. `alg` must be `ES256` — whatever the header says, only ES256 is ever run (`alg_not_allowed`);
///    `typ`, when present, must be `JWT`; no `crit` (`token_malformed`);
/// 3. `kid` present, well formed, and exactly a key of the set (`kid_missing`, `kid_invalid`,
///    `kid_unknown`);
/// 4. signature exactly 64 bytes `R ‖ S` (`signature_malformed`) that verifies with that key
///    over the ASCII signing input (`signature_invalid`);
/// 5. claims: the same strict JSON as the header, no `aud`, `iss`, `sub`, `plat` (`ios`/`android`),
///    integer `iat` and `exp` with `exp` > `iat` (`claims_invalid`); `iss` equal to ours
///    (`issuer_mismatch`); `exp − iat` ≤ the configured TTL (`ttl_too_long`);
/// 6. time, with at most 60 s leeway: `now` < `exp` + leeway (`token_expired`), `nbf` and `iat`
///    ≤ `now` + leeway (`token_not_yet_valid`, `token_issued_in_future`).
///
/// Tokens that pass 1–5 are cached by SHA-256 of the token (bounded); a cached token skips
/// 1–5 but step 6 runs on every call. Revocation of the device is the caller's check.
public final class SessionVerifier: Sendable {
    /// Longest token accepted, bytes. Keyward's own tokens are about 330 bytes.
    public static let maxTokenBytes = 4096
    /// Largest leeway honoured, seconds.
    public static let maxLeewaySeconds: Int64 = 60

    private let keys: SessionKeySet
    private let issuer: String
    private let maxTTLSeconds: Int64
    private let leewaySeconds: Int64
    private let cache: VerifiedTokenCache

    /// - Parameters:
    ///   - keys: the keys whose tokens are accepted (active and verify-only).
    ///   - issuer: the required `iss`.
    ///   - maxTTLSeconds: the configured session TTL; longer-lived tokens are refused.
    ///   - leewaySeconds: clock skew allowed on `exp`, `nbf`, `iat`; clamped to 0…60.
    ///   - cacheCapacity: verified tokens remembered (0 disables the cache).
    public init(keys: SessionKeySet, issuer: String, maxTTLSeconds: Int64, leewaySeconds: Int64 = 60, cacheCapacity: Int = 100_000) {
        self.keys = keys
        self.issuer = issuer
        self.maxTTLSeconds = maxTTLSeconds
        self.leewaySeconds = min(max(leewaySeconds, 0), SessionVerifier.maxLeewaySeconds)
        cache = VerifiedTokenCache(capacity: cacheCapacity)
    }

    /// Verifies `token` at `now` (unix seconds) and returns its claims.
    /// - Throws: ``SessionError`` with the reason of the first failed check (see the type's doc).
    public func verify(_ token: String, now: Int64) throws(SessionError) -> SessionClaims {
        var token = token
        let result: Result<SessionClaims, SessionError> = token.withUTF8 { bytes in
            guard bytes.count <= SessionVerifier.maxTokenBytes else { return .failure(SessionError(.tokenMalformed)) }
            let key = VerifiedTokenCache.Key(digest: SHA256.hash(UnsafeRawBufferPointer(bytes)))
            if let entry = cache.lookup(key) {
                return checkTime(entry, now: now)
            }
            do throws(SessionError) {
                let entry = try verifyUncached(bytes)
                let checked = checkTime(entry, now: now)
                if case .success = checked { cache.insert(key, entry, now: now) }
                return checked
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Number of cached verified tokens (for tests and metrics).
    public var cachedTokenCount: Int { cache.count }

    // MARK: - Steps 1–5

    private func verifyUncached(_ bytes: UnsafeBufferPointer<UInt8>) throws(SessionError) -> VerifiedTokenCache.Entry {
        guard let parts = JWTSegment.split(bytes),
              let headerJSON = JWTSegment.decode(UnsafeBufferPointer(rebasing: bytes[parts.header])),
              StrictJSONObject.memberNames(headerJSON) != nil,
              let header = try? JSONDecoder().decode(JWTHeader.self, from: Data(headerJSON))
        else { throw SessionError(.tokenMalformed) }

        guard header.alg == "ES256" else { throw SessionError(.algNotAllowed) }
        guard header.typ == nil || header.typ == "JWT", !header.hasCrit else { throw SessionError(.tokenMalformed) }
        guard let kid = header.kid else { throw SessionError(.kidMissing) }
        guard SessionKeySet.isWellFormedKID(kid) else { throw SessionError(.kidInvalid) }
        guard let publicKey = keys.verificationKey(kid: kid) else { throw SessionError(.kidUnknown) }

        guard let signature = JWTSegment.decode(UnsafeBufferPointer(rebasing: bytes[parts.signature])) else {
            throw SessionError(.tokenMalformed)
        }
        guard signature.count == ECCurve.p256.rawSignatureLength else { throw SessionError(.signatureMalformed) }
        // RFC 7515 §5.2 step 8: the signing input is the ASCII of the first two segments as sent.
        let signingInput = Array(UnsafeBufferPointer(rebasing: bytes[0..<parts.payload.upperBound]))
        guard publicKey.isValidSignature(raw: signature, message: signingInput) else {
            throw SessionError(.signatureInvalid)
        }

        guard let payloadJSON = JWTSegment.decode(UnsafeBufferPointer(rebasing: bytes[parts.payload])) else {
            throw SessionError(.tokenMalformed)
        }
        // Claims Keyward never issues but another verifier would honour are refused: `aud` (RFC 7519 §4.1.3).
        guard let claimNames = StrictJSONObject.memberNames(payloadJSON), !claimNames.contains("aud"),
              let payload = try? JSONDecoder().decode(JWTPayload.self, from: Data(payloadJSON)),
              !payload.sub.isEmpty, SessionPlatform(rawValue: payload.plat) != nil, payload.exp > payload.iat
        else { throw SessionError(.claimsInvalid) }
        guard payload.iss == issuer else { throw SessionError(.issuerMismatch) }
        guard SaturatingTime.subtract(payload.exp, payload.iat) <= maxTTLSeconds else { throw SessionError(.ttlTooLong) }

        let claims = SessionClaims(iss: payload.iss, sub: payload.sub, plat: payload.plat, iat: payload.iat, exp: payload.exp)
        return VerifiedTokenCache.Entry(claims: claims, nbf: payload.nbf)
    }

    // MARK: - Step 6

    private func checkTime(_ entry: VerifiedTokenCache.Entry, now: Int64) -> Result<SessionClaims, SessionError> {
        let claims = entry.claims
        // RFC 7519 §4.1.4: not accepted on or after exp.
        let latestAcceptedStart = SaturatingTime.add(now, leewaySeconds)
        if now >= SaturatingTime.add(claims.exp, leewaySeconds) { return .failure(SessionError(.tokenExpired)) }
        if let nbf = entry.nbf, nbf > latestAcceptedStart { return .failure(SessionError(.tokenNotYetValid)) }
        if claims.iat > latestAcceptedStart { return .failure(SessionError(.tokenIssuedInFuture)) }
        return .success(claims)
    }
}
