/// Why a session token was refused or could not be made. ``reason`` is the stable slug that goes
/// to logs and metrics; clients only ever see `session_invalid`.
public struct SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every refusal, by slug.
    public enum Kind: String, Sendable, CaseIterable {
        /// Not three base64url segments, bad base64url, bad JSON, `typ` other than `JWT`, or a `crit` header.
        case tokenMalformed = "token_malformed"
        /// Header `alg` is not `ES256` (`none`, `HS256`, `ES384`, …): RFC 8725 §3.1.
        case algNotAllowed = "alg_not_allowed"
        /// No `kid` in the header.
        case kidMissing = "kid_missing"
        /// `kid` is not 1–64 characters of `[A-Za-z0-9_-]` (path-like or otherwise odd).
        case kidInvalid = "kid_invalid"
        /// `kid` names no key of the key set.
        case kidUnknown = "kid_unknown"
        /// The signature is not a 64-byte `R ‖ S` (RFC 7518 §3.4), e.g. DER.
        case signatureMalformed = "signature_malformed"
        /// The signature does not verify under the key `kid` names.
        case signatureInvalid = "signature_invalid"
        /// A required claim is missing or of the wrong type, `plat` is unknown, or `exp` ≤ `iat`.
        case claimsInvalid = "claims_invalid"
        /// `iss` is not this deployment's issuer.
        case issuerMismatch = "issuer_mismatch"
        /// `exp` (plus leeway) has passed.
        case tokenExpired = "token_expired"
        /// `nbf` is later than now plus leeway.
        case tokenNotYetValid = "token_not_yet_valid"
        /// `iat` is later than now plus leeway.
        case tokenIssuedInFuture = "token_issued_in_future"
        /// `exp − iat` exceeds the configured session TTL.
        case ttlTooLong = "ttl_too_long"
        /// A key set or issuer configuration is unusable (duplicate or malformed `kid`, non-P-256 key, bad TTL).
        case configurationInvalid = "session_config_invalid"
        /// Signing failed inside OpenSSL.
        case signingFailed = "session_signing_failed"
    }

    /// What went wrong.
    public let kind: Kind

    /// An error of `kind`.
    public init(_ kind: Kind) { self.kind = kind }

    /// The stable slug, e.g. `token_expired`.
    public var reason: String { kind.rawValue }

    /// `session refused: <slug>`; never contains the token.
    public var description: String { "session refused: \(kind.rawValue)" }
}
