import CShims
import COpenSSL

/// One parsed X.509 v3 certificate (RFC 5280), read once into the fields verifiers need.
///
/// Parsing is strict: exactly one DER certificate with no trailing bytes, readable validity
/// dates, and extensions OpenSSL can decode without contradiction (a duplicated extension, for
/// example, is refused: RFC 5280 §4.2 allows each at most once). The `X509` object is kept for
/// chain verification and never modified, so instances are shared freely between threads.
public final class X509Certificate: @unchecked Sendable {
    /// The certificate's exact DER bytes.
    public let der: [UInt8]
    /// Start of the validity period, unix seconds (RFC 5280 §4.1.2.5; inclusive).
    public let notBefore: Int64
    /// End of the validity period, unix seconds (inclusive).
    public let notAfter: Int64
    /// The subject in one-line RFC 2253 form, e.g. `CN=Apple App Attestation Root CA,O=Apple Inc.,ST=California`.
    public let subject: String
    /// The issuer in the same form as ``subject``.
    public let issuer: String
    /// SHA-256 of ``der``: 32 bytes.
    public let sha256Fingerprint: [UInt8]
    /// Whether basicConstraints says `cA: TRUE` (RFC 5280 §4.2.1.9).
    public let isCA: Bool

    let x509: OpaquePointer
    private let extensionFlags: UInt32
    private let ecPublicKey: Result<ECPublicKey, CryptoError>

    /// Parses one DER certificate.
    /// - Throws: ``X509Error/malformed(_:)`` if the bytes are not exactly one well-formed certificate.
    public init(der: [UInt8]) throws(X509Error) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
                X509_free(x509)
                return nil
            }
            return x509
        }
        guard let x509 = parsed else {
            clearOpenSSLErrors()
            throw .malformed("not one DER certificate")
        }
        // Every check runs before the first stored property is set: a throwing class initializer
        // does not run deinit, so `x509` is freed by hand on each refusal.
        // X509_get_extension_flags computes OpenSSL's extension cache now, once, so later readers
        // share a finished object.
        let flags = X509_get_extension_flags(x509)
        guard flags & UInt32(EXFLAG_INVALID) == 0 else {
            X509_free(x509)
            clearOpenSSLErrors()
            throw .malformed("invalid or duplicated extensions")
        }
        guard let notBefore = ASN1Time.unixSeconds(X509_get0_notBefore(x509)),
              let notAfter = ASN1Time.unixSeconds(X509_get0_notAfter(x509))
        else {
            X509_free(x509)
            throw .malformed("unreadable validity period")
        }
        self.x509 = x509
        self.der = der
        self.extensionFlags = flags
        self.notBefore = notBefore
        self.notAfter = notAfter
        subject = X509Certificate.rfc2253(X509_get_subject_name(x509))
        issuer = X509Certificate.rfc2253(X509_get_issuer_name(x509))
        sha256Fingerprint = SHA256.hash(der)
        isCA = flags & UInt32(EXFLAG_CA) != 0

        if let pkey = X509_get0_pubkey(x509), let key = EVPKey(retaining: pkey) {
            do throws(CryptoError) {
                ecPublicKey = .success(try ECPublicKey(owning: key))
            } catch {
                ecPublicKey = .failure(error)
            }
        } else {
            clearOpenSSLErrors()
            ecPublicKey = .failure(.invalidKey("unreadable public key"))
        }
    }

    /// Parses the first PEM certificate block (`-----BEGIN CERTIFICATE-----`, RFC 7468 §5) in
    /// `pem`; text before it and anything after it are ignored (for pinned constants and files).
    /// - Throws: ``X509Error/malformed(_:)`` if there is no readable certificate block.
    public convenience init(pem: String) throws(X509Error) {
        let der: [UInt8]
        do throws(CryptoError) {
            der = try withReadOnlyBIO(Array(pem.utf8)) { bio throws(CryptoError) in
                guard let x509 = PEM_read_bio_X509(bio, nil, nil, nil) else { throw .invalidInput("no certificate") }
                defer { X509_free(x509) }
                return try derEncoded { i2d_X509(x509, $0) }
            }
        } catch {
            clearOpenSSLErrors()
            throw .malformed("not a PEM certificate")
        }
        try self.init(der: der)
    }

    deinit { X509_free(x509) }

    /// The subject public key as an EC key (its ``ECPublicKey/x962`` is the 65- or 97-byte point).
    /// - Throws: ``CryptoError/invalidKey(_:)`` for a non-EC key or a curve other than P-256/P-384.
    public func publicKey() throws(CryptoError) -> ECPublicKey {
        try ecPublicKey.get()
    }

    /// The contents of the `extnValue` OCTET STRING (RFC 5280 §4.1: the extension's own DER) for
    /// the extension with dotted `oid` (e.g. `1.2.840.113635.100.8.2`), or `nil` if absent or the
    /// OID text is invalid.
    public func extensionValue(oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            clearOpenSSLErrors()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(x509, object, -1)
        guard index >= 0, let ext = X509_get_ext(x509, index), let data = X509_EXTENSION_get_data(ext) else {
            return nil
        }
        let length = Int(ASN1_STRING_length(data))
        guard length > 0, let bytes = ASN1_STRING_get0_data(data) else { return length == 0 ? [] : nil }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// Whether the extension with dotted `oid` is present and marked critical.
    public func isExtensionCritical(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else {
            clearOpenSSLErrors()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(x509, object, -1)
        guard index >= 0, let ext = X509_get_ext(x509, index) else { return false }
        return X509_EXTENSION_get_critical(ext) == 1
    }

    /// Whether the certificate is issued by itself and its signature verifies under its own key
    /// (X509_self_signed(3)). Costs one signature verification for a self-issued certificate.
    public var isSelfSigned: Bool { X509_self_signed(x509, 1) == 1 }

    /// Whether issuer and subject match (with consistent key identifiers), without checking the
    /// signature: any such certificate sent by a client is an attempt to supply an anchor.
    var isSelfIssued: Bool { X509_self_signed(x509, 0) == 1 }

    /// Whether OpenSSL found a critical extension it does not implement (RFC 5280 §4.2: such a
    /// certificate must be refused by a verifier).
    var hasUnhandledCriticalExtension: Bool { extensionFlags & UInt32(EXFLAG_CRITICAL) != 0 }

    private static func rfc2253(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        let bytes = try? bytesWrittenToBIO { bio in
            X509_NAME_print_ex(bio, name, 0, keyward_XN_FLAG_RFC2253()) >= 0
        }
        return String(decoding: bytes ?? [], as: UTF8.self)
    }
}
