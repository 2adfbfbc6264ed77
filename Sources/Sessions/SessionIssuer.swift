import KeywardCrypto

/// Issues ES256 session tokens (RFC 7519 JWTs in JWS compact form, RFC 7515 §7.1; ES256 per
/// RFC 7518 §3.4) with the key set's active key.
///
/// Header `{"alg":"ES256","typ":"JWT","kid":…}`; claims `{"iss","sub","plat","iat","exp"}`
/// (README, "API"). Thread-safe; signing costs one ECDSA P-256 signature.
public final class SessionIssuer: Sendable {
    /// Session lifetime bounds, seconds (one minute to one day).
    public static let ttlRange: ClosedRange<Int64> = 60...86_400

    private let keys: SessionKeySet
    private let issuer: String
    private let ttlSeconds: Int64
    /// The `kid` of the key that signs (RFC 7515 §4.1.4).
    public var activeKID: String { keys.activeKID }
    /// `base64url(header)` is the same for every token: encode it once.
    private let encodedHeader: String

    /// - Parameters:
    ///   - keys: the key set; its active key signs.
    ///   - issuer: the `iss` claim.
    ///   - ttlSeconds: lifetime of each token, within ``ttlRange``.
    /// - Throws: ``SessionError/Kind/configurationInvalid`` for an empty issuer or a TTL out of range.
    public init(keys: SessionKeySet, issuer: String, ttlSeconds: Int64) throws(SessionError) {
        guard !issuer.isEmpty, SessionIssuer.ttlRange.contains(ttlSeconds) else { throw SessionError(.configurationInvalid) }
        self.keys = keys
        self.issuer = issuer
        self.ttlSeconds = ttlSeconds
        let header = "{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\(JSONText.quoted(keys.activeKID))}"
        encodedHeader = Base64.encodeURL(Array(header.utf8))
    }

    /// Issues a token for one device.
    /// - Parameters:
    ///   - deviceID: the `sub` claim (non-empty).
    ///   - platform: the `plat` claim.
    ///   - now: issue time, unix seconds (`iat`); `exp` = `now` + TTL.
    /// - Returns: the compact JWT and its expiry (unix seconds), as the session response carries them.
    /// - Throws: ``SessionError/Kind/claimsInvalid`` for an empty device id,
    ///   ``SessionError/Kind/signingFailed`` if OpenSSL fails.
    public func issue(deviceID: String, platform: SessionPlatform, now: Int64) throws(SessionError) -> (token: String, expiresAt: Int64) {
        guard !deviceID.isEmpty else { throw SessionError(.claimsInvalid) }
        let expiresAt = SaturatingTime.add(now, ttlSeconds)
        let claims = "{\"iss\":\(JSONText.quoted(issuer)),\"sub\":\(JSONText.quoted(deviceID)),"
            + "\"plat\":\"\(platform.rawValue)\",\"iat\":\(now),\"exp\":\(expiresAt)}"
        let signingInput = encodedHeader + "." + Base64.encodeURL(Array(claims.utf8))
        let signature: [UInt8]
        do {
            signature = try keys.activeKey.signatureRaw(message: Array(signingInput.utf8))
        } catch {
            throw SessionError(.signingFailed)
        }
        return (signingInput + "." + Base64.encodeURL(signature), expiresAt)
    }
}
