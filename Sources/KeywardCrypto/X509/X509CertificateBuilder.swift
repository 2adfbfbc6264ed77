import COpenSSL

/// One X.509 v3 extension to add verbatim (RFC 5280 §4.1: extnID, critical, extnValue).
public struct X509Extension: Sendable, Equatable {
    /// Dotted OID, e.g. `1.2.840.113635.100.8.2`.
    public var oid: String
    /// The critical flag.
    public var critical: Bool
    /// The extension's own DER, placed inside the extnValue OCTET STRING.
    public var value: [UInt8]

    /// - Parameters: oid dotted; critical flag; value the extension's DER (without the OCTET STRING wrapper).
    public init(oid: String, critical: Bool, value: [UInt8]) {
        self.oid = oid
        self.critical = critical
        self.value = value
    }
}

/// The digest a certificate is signed with: ecdsa-with-SHA256 or ecdsa-with-SHA384 (RFC 5758 §3.2).
public enum X509SignatureDigest: Sendable {
    /// ecdsa-with-SHA256 / ecdsa-with-SHA384.
    case sha256, sha384
}

/// Builds EC-signed X.509 v3 certificates for test anchors, the device simulator and the demo.
/// Never used on a verification path.
///
/// A CA certificate gets a critical basicConstraints `cA: TRUE` and a critical keyUsage of
/// keyCertSign + cRLSign (RFC 5280 §4.2.1.3, §4.2.1.9); any other certificate gets neither,
/// unless ``extensions`` supplies them (an OID listed there replaces the automatic one).
public struct X509CertificateBuilder: Sendable {
    /// Subject attributes in order, as OpenSSL short names and UTF-8 values, e.g. `[("CN", "Test Root")]`.
    public var subject: [(attribute: String, value: String)]
    /// The serial number, big-endian unsigned bytes (RFC 5280 §4.1.2.2: positive, ≤ 20 bytes).
    public var serialNumber: [UInt8]
    /// Validity start, unix seconds.
    public var notBefore: Int64
    /// Validity end, unix seconds.
    public var notAfter: Int64
    /// The subject's public key.
    public var publicKey: ECPublicKey
    /// Whether the certificate may issue others (basicConstraints cA).
    public var isCA: Bool
    /// Extra extensions, added after the automatic ones.
    public var extensions: [X509Extension]

    /// - Parameters:
    ///   - commonName: the subject CN.
    ///   - serialNumber: big-endian bytes; a random positive 8-byte serial when `nil`.
    public init(commonName: String, publicKey: ECPublicKey, notBefore: Int64, notAfter: Int64,
                isCA: Bool = false, serialNumber: [UInt8]? = nil, extensions: [X509Extension] = []) {
        subject = [("CN", commonName)]
        self.publicKey = publicKey
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.isCA = isCA
        var serial = serialNumber ?? SecureRandom.bytes(8)
        if serialNumber == nil, !serial.isEmpty { serial[0] = serial[0] & 0x7F | 0x01 }
        self.serialNumber = serial
        self.extensions = extensions
    }

    /// A self-signed certificate (a root): issuer = subject, signed by `key`.
    /// - Throws: ``CryptoError`` if `key` does not match ``publicKey`` or OpenSSL fails.
    public func selfSigned(key: ECPrivateKey, digest: X509SignatureDigest = .sha256) throws(CryptoError) -> X509Certificate {
        guard key.publicKey == publicKey else { throw .invalidKey("signing key does not match the subject key") }
        return try build(issuerName: nil, signingKey: key, digest: digest)
    }

    /// A certificate issued by `issuer`, signed with `issuerKey` (which should be `issuer`'s key;
    /// a mismatched key makes a certificate no verifier accepts, which negative tests want).
    /// - Throws: ``CryptoError`` if OpenSSL fails.
    public func signed(by issuer: X509Certificate, issuerKey: ECPrivateKey,
                       digest: X509SignatureDigest = .sha256) throws(CryptoError) -> X509Certificate {
        try build(issuerName: X509_get_subject_name(issuer.x509), signingKey: issuerKey, digest: digest)
    }

    private func build(issuerName: OpaquePointer?, signingKey: ECPrivateKey,
                       digest: X509SignatureDigest) throws(CryptoError) -> X509Certificate {
        guard let x509 = X509_new() else { throw .internalFailure("X509_new") }
        defer { X509_free(x509) }
        guard X509_set_version(x509, 2) == 1 else { throw .internalFailure("X509_set_version") }
        try setSerial(x509)
        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter)) != nil
        else { throw .internalFailure("ASN1_TIME_set") }

        guard let name = X509_NAME_new() else { throw .internalFailure("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        for (attribute, value) in subject {
            guard X509_NAME_add_entry_by_txt(name, attribute, MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                clearOpenSSLErrors()
                throw .invalidInput("subject attribute \(attribute)")
            }
        }
        guard X509_set_subject_name(x509, name) == 1,
              X509_set_issuer_name(x509, issuerName ?? name) == 1,
              X509_set_pubkey(x509, publicKey.key.pointer) == 1
        else { throw .internalFailure("X509 names or key") }

        for ext in automaticExtensions + extensions {
            try add(ext, to: x509)
        }
        let md = digest == .sha256 ? Digests.sha256 : Digests.sha384
        guard X509_sign(x509, signingKey.key.pointer, md) > 0 else {
            clearOpenSSLErrors()
            throw .internalFailure("X509_sign")
        }
        let der = try derEncoded { i2d_X509(x509, $0) }
        do throws(X509Error) {
            return try X509Certificate(der: der)
        } catch {
            throw .invalidInput("built certificate does not parse: \(error.reason)")
        }
    }

    /// basicConstraints and keyUsage for a CA, unless the caller supplies those OIDs.
    private var automaticExtensions: [X509Extension] {
        guard isCA else { return [] }
        let supplied = Set(extensions.map(\.oid))
        var out: [X509Extension] = []
        if !supplied.contains("2.5.29.19") {
            // SEQUENCE { BOOLEAN TRUE }
            out.append(X509Extension(oid: "2.5.29.19", critical: true, value: [0x30, 0x03, 0x01, 0x01, 0xFF]))
        }
        if !supplied.contains("2.5.29.15") {
            // BIT STRING, 1 unused bit: keyCertSign (5) and cRLSign (6) → 0b0000_0110
            out.append(X509Extension(oid: "2.5.29.15", critical: true, value: [0x03, 0x02, 0x01, 0x06]))
        }
        return out
    }

    private func setSerial(_ x509: OpaquePointer) throws(CryptoError) {
        guard !serialNumber.isEmpty, serialNumber.count <= 20,
              let bn = BN_bin2bn(serialNumber, Int32(serialNumber.count), nil)
        else { throw .invalidInput("serial number must be 1–20 bytes") }
        defer { BN_free(bn) }
        guard BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509)) != nil else {
            throw .internalFailure("serial number")
        }
    }

    private func add(_ ext: X509Extension, to x509: OpaquePointer) throws(CryptoError) {
        guard let object = OBJ_txt2obj(ext.oid, 1) else {
            clearOpenSSLErrors()
            throw .invalidInput("extension OID")
        }
        defer { ASN1_OBJECT_free(object) }
        guard let octets = ASN1_OCTET_STRING_new() else { throw .internalFailure("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(octets) }
        guard ASN1_OCTET_STRING_set(octets, ext.value, Int32(ext.value.count)) == 1,
              let created = X509_EXTENSION_create_by_OBJ(nil, object, ext.critical ? 1 : 0, octets)
        else { throw .internalFailure("X509_EXTENSION_create_by_OBJ") }
        defer { X509_EXTENSION_free(created) }
        guard X509_add_ext(x509, created, -1) == 1 else { throw .internalFailure("X509_add_ext") }
    }
}
