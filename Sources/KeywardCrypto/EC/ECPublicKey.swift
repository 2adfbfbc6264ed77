import COpenSSL
import CShims

/// An ECDSA public key on P-256 or P-384, parsed once and held as an `EVP_PKEY` so each
/// verification only pays for the signature check.
///
/// Points are validated on load (OpenSSL refuses points off the curve), so a key value always
/// names a real curve point. Equality compares curve and point.
public struct ECPublicKey: Sendable, Equatable, Hashable {
    /// The key's curve.
    public let curve: ECCurve
    /// The uncompressed X9.62 point `04 ‖ X ‖ Y` (SEC 1 §2.3.3): 65 bytes on P-256, 97 on P-384.
    public let x962: [UInt8]
    let key: EVPKey

    /// Loads an uncompressed X9.62 point (65 bytes for P-256, 97 bytes for P-384).
    /// - Throws: ``CryptoError/invalidKey(_:)`` for another length, a compressed point, or a point
    ///   not on the curve.
    public init(x962: [UInt8]) throws(CryptoError) {
        let curve: ECCurve
        switch x962.count {
        case ECCurve.p256.pointLength: curve = .p256
        case ECCurve.p384.pointLength: curve = .p384
        default: throw .invalidKey("EC point must be 65 or 97 bytes")
        }
        guard x962.first == 0x04 else { throw .invalidKey("EC point not uncompressed") }
        try self.init(curve: curve, uncompressedPoint: x962)
    }

    /// Builds the key straight from its parameters (EVP_PKEY_fromdata(3)): about six times
    /// cheaper than decoding DER through OpenSSL 3's decoder framework, which matters when a
    /// key arrives with every request (App Attest assertions). OpenSSL checks the point is on the curve.
    private init(curve: ECCurve, uncompressedPoint: [UInt8]) throws(CryptoError) {
        guard let pkey = keyward_ec_public_key_from_point(curve.groupName, uncompressedPoint, uncompressedPoint.count) else {
            clearOpenSSLErrors()
            throw .invalidKey("EC point not on the curve")
        }
        self.curve = curve
        self.x962 = uncompressedPoint
        self.key = EVPKey(owning: pkey)
    }

    /// Loads a DER `SubjectPublicKeyInfo` (RFC 5480) with a named P-256 or P-384 curve.
    /// - Throws: ``CryptoError/invalidKey(_:)`` if malformed, followed by extra bytes, not EC, or
    ///   on another curve.
    public init(spkiDER: [UInt8]) throws(CryptoError) {
        // The usual shape (named curve, uncompressed point) takes the fast path.
        for curve in ECCurve.allCases where spkiDER.count == curve.spkiPrefix.count + curve.pointLength
            && spkiDER.starts(with: curve.spkiPrefix) && spkiDER[curve.spkiPrefix.count] == 0x04 {
            try self.init(curve: curve, uncompressedPoint: Array(spkiDER[curve.spkiPrefix.count...]))
            return
        }
        try self.init(owning: EVPKey.parsePublicKey(spkiDER: spkiDER))
    }

    /// Loads a PEM `-----BEGIN PUBLIC KEY-----` (SubjectPublicKeyInfo, RFC 7468 §13).
    /// - Throws: ``CryptoError/invalidKey(_:)`` as ``init(spkiDER:)``.
    public init(pem: String) throws(CryptoError) {
        let pkey = try withReadOnlyBIO(Array(pem.utf8)) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let pkey else {
            clearOpenSSLErrors()
            throw .invalidKey("malformed public key PEM")
        }
        try self.init(owning: EVPKey(owning: pkey))
    }

    /// Wraps an already-parsed key (from a certificate or a private key).
    init(owning key: EVPKey) throws(CryptoError) {
        (curve, x962) = try ECKeyInspection.curveAndPoint(of: key.pointer)
        self.key = key
    }

    /// The key as DER `SubjectPublicKeyInfo` with a named curve and uncompressed point (RFC 5480).
    public var spkiDER: [UInt8] { curve.spkiPrefix + x962 }

    /// The key as PEM `PUBLIC KEY` text (RFC 7468 §13).
    public var pem: String { PEMText.encode(label: "PUBLIC KEY", der: spkiDER) }

    /// Verifies a DER ECDSA signature (RFC 3279 §2.2.3) over SHA-256 (P-256) or SHA-384 (P-384)
    /// of `message`. Non-canonical DER and trailing bytes are refused (OpenSSL re-encodes and compares).
    public func isValidSignature(der: [UInt8], message: [UInt8]) -> Bool {
        ECDSAOperations.verify(key: key, digest: curve.digest(message), der: der)
    }

    /// Verifies a raw `R ‖ S` signature (RFC 7518 §3.4): exactly 64 bytes on P-256, 96 on P-384,
    /// over SHA-256 / SHA-384 of `message`. Any other length is invalid.
    public func isValidSignature(raw: [UInt8], message: [UInt8]) -> Bool {
        guard let der = ECDSASignatureEncoding.der(fromRaw: raw, coordinateLength: curve.coordinateLength) else {
            return false
        }
        return ECDSAOperations.verify(key: key, digest: curve.digest(message), der: der)
    }

    /// Same curve and same point.
    public static func == (lhs: ECPublicKey, rhs: ECPublicKey) -> Bool {
        lhs.curve == rhs.curve && lhs.x962 == rhs.x962
    }

    /// Hashes the point (consistent with `==`).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(x962)
    }
}
