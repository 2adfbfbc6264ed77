import KeywardCrypto

/// The session keys of one deployment: one active P-256 key that signs, and earlier keys that
/// only verify, each named by a `kid` (RFC 7515 §4.1.4), so rotating the signing key does not
/// log every device out. Retire a key from the set once its last token has expired (one TTL).
public struct SessionKeySet: Sendable {
    /// The signing key's `kid`.
    public let activeKID: String
    /// The signing key.
    public let activeKey: ECPrivateKey
    /// Every key that verifies, by `kid`, the active one included.
    let verificationKeys: [String: ECPublicKey]

    /// - Parameters:
    ///   - active: the signing key and its `kid`.
    ///   - verifyOnly: earlier keys still accepted for verification, each with its own `kid`.
    /// - Throws: ``SessionError/Kind/configurationInvalid`` if a `kid` is malformed (see
    ///   ``isWellFormedKID(_:)``) or repeated, or a key is not P-256 (ES256 is P-256 only, RFC 7518 §3.4).
    public init(active: (kid: String, key: ECPrivateKey), verifyOnly: [(kid: String, key: ECPublicKey)] = []) throws(SessionError) {
        var keys: [String: ECPublicKey] = [:]
        for (kid, key) in [(active.kid, active.key.publicKey)] + verifyOnly {
            guard SessionKeySet.isWellFormedKID(kid), key.curve == .p256, keys[kid] == nil else {
                throw SessionError(.configurationInvalid)
            }
            keys[kid] = key
        }
        activeKID = active.kid
        activeKey = active.key
        verificationKeys = keys
    }

    /// The `kid`s of the keys that only verify, sorted (for logs: a rotation's state at a glance).
    public var verifyOnlyKIDs: [String] { verificationKeys.keys.filter { $0 != activeKID }.sorted() }

    /// The key `kid` names, or `nil`.
    public func verificationKey(kid: String) -> ECPublicKey? { verificationKeys[kid] }

    /// Whether `kid` is 1–64 characters of the base64url alphabet `[A-Za-z0-9_-]`. Anything else
    /// (dots, slashes, spaces) is refused before lookup so a `kid` can never act as a path.
    public static func isWellFormedKID(_ kid: String) -> Bool {
        let utf8 = kid.utf8
        guard (1...64).contains(utf8.count) else { return false }
        return utf8.allSatisfy(JWTSegment.isBase64URLSymbol)
    }

    /// A `kid` derived from the key itself: its JWK thumbprint (RFC 7638 §3) — base64url of
    /// SHA-256 over `{"crv":"P-256","kty":"EC","x":…,"y":…}`, 43 characters.
    public static func thumbprintKID(for key: ECPublicKey) -> String {
        let x = Array(key.x962[1...key.curve.coordinateLength])
        let y = Array(key.x962[(key.curve.coordinateLength + 1)...])
        let jwk = "{\"crv\":\"\(key.curve.rawValue)\",\"kty\":\"EC\",\"x\":\"\(Base64.encodeURL(x))\",\"y\":\"\(Base64.encodeURL(y))\"}"
        return Base64.encodeURL(SHA256.hash(Array(jwk.utf8)))
    }
}
