import CShims
import COpenSSL

/// Why a CMS SignedData envelope (RFC 5652 §5) was refused. ``reason`` is a stable slug.
public enum CMSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not one ContentInfo holding a SignedData with embedded `id-data` content, one signer
    /// whose certificate is among the embedded ones, and a bounded number of certificates
    /// (`malformed_envelope`).
    case malformed(String)
    /// The signer's signature does not verify over the content (`signature_invalid`).
    case signatureInvalid

    /// Stable slug: `malformed_envelope` or `signature_invalid`.
    public var reason: String {
        switch self {
        case .malformed: "malformed_envelope"
        case .signatureInvalid: "signature_invalid"
        }
    }

    /// A description for people; never contains the envelope's bytes.
    public var description: String {
        switch self {
        case .malformed(let detail): "malformed CMS envelope: \(detail)"
        case .signatureInvalid: "CMS signature does not verify over the content"
        }
    }
}

/// A CMS SignedData (RFC 5652 §5; PKCS #7 v1.5, RFC 2315 §9) whose one signature has been checked
/// with OpenSSL's CMS functions (CMS_verify(3)). Whom the signer certificate chains to is the
/// caller's question: this type checks the signature only, never trust.
///
/// Accepted shape, each refusal ``CMSError/malformed(_:)``: exactly one ContentInfo of type
/// `signedData` and nothing after it, in DER or BER (Apple's receipts use BER indefinite lengths); encapsulated content of type `id-data` present in the envelope
/// (not detached); exactly one SignerInfo; between one and ``maxCertificates`` embedded
/// certificates, exactly one of which identifies the signer (by issuerAndSerialNumber or
/// subjectKeyIdentifier).
public struct CMSSignedData: Sendable {
    /// The encapsulated content (eContent), exactly as signed.
    public let content: [UInt8]
    /// The embedded certificate that made the signature.
    public let signer: X509Certificate
    /// Every embedded certificate other than ``signer``, in envelope order.
    public let otherCertificates: [X509Certificate]

    /// Most certificates accepted in one envelope (Apple's receipts carry three).
    public static let maxCertificates = 8
    /// Largest envelope accepted, bytes (Apple's receipts are about 4 KB).
    public static let maxBytes = 64 * 1024

    /// Parses `der` and verifies its signature over its content.
    /// - Throws: ``CMSError/malformed(_:)`` for the shape rules above, ``CMSError/signatureInvalid``
    ///   when the signature (or, with signed attributes, the message digest) does not verify.
    public init(der: [UInt8]) throws(CMSError) {
        guard !der.isEmpty, der.count <= Self.maxBytes else { throw .malformed("size outside 1…\(Self.maxBytes) bytes") }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let cms = d2i_CMS_ContentInfo(nil, &cursor, buffer.count) else { return nil }
            guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
                CMS_ContentInfo_free(cms)
                return nil
            }
            return cms
        }
        guard let cms = parsed else {
            clearOpenSSLErrors()
            throw .malformed("not one ContentInfo")
        }
        defer { CMS_ContentInfo_free(cms) }

        guard OBJ_obj2nid(CMS_get0_type(cms)) == NID_pkcs7_signed else { throw .malformed("content type is not signedData") }
        guard OBJ_obj2nid(CMS_get0_eContentType(cms)) == NID_pkcs7_data else { throw .malformed("eContentType is not id-data") }
        guard CMS_is_detached(cms) == 0 else { throw .malformed("content is detached") }
        guard let signers = CMS_get0_SignerInfos(cms), keyward_sk_CMS_SignerInfo_num(signers) == 1,
              let signerInfo = keyward_sk_CMS_SignerInfo_value(signers, 0)
        else { throw .malformed("not exactly one signer") }

        let certificates = try Self.embeddedCertificates(cms)
        let signerIndices = certificates.indices.filter { CMS_SignerInfo_cert_cmp(signerInfo, certificates[$0].x509) == 0 }
        guard signerIndices.count == 1, let signerIndex = signerIndices.first else {
            throw .malformed("the signer's certificate is not embedded exactly once")
        }

        // The signer's certificate is judged by the caller (a pinned root at a given time), so
        // OpenSSL only checks the signature here: CMS_NO_SIGNER_CERT_VERIFY.
        let content: [UInt8]
        do {
            content = try bytesWrittenToBIO { out in
                CMS_verify(cms, nil, nil, nil, out, UInt32(CMS_NO_SIGNER_CERT_VERIFY | CMS_BINARY)) == 1
            }
        } catch {
            throw .signatureInvalid
        }
        self.content = content
        self.signer = certificates[signerIndex]
        self.otherCertificates = certificates.enumerated().filter { $0.offset != signerIndex }.map(\.element)
    }

    /// The envelope's certificates, re-parsed through ``X509Certificate`` (its strict rules).
    private static func embeddedCertificates(_ cms: OpaquePointer) throws(CMSError) -> [X509Certificate] {
        guard let stack = CMS_get1_certs(cms) else {
            clearOpenSSLErrors()
            throw .malformed("no certificates")
        }
        defer { keyward_sk_X509_pop_free(stack) }
        let count = Int(keyward_sk_X509_num(stack))
        guard (1...maxCertificates).contains(count) else { throw .malformed("certificate count outside 1…\(maxCertificates)") }
        var certificates: [X509Certificate] = []
        for index in 0..<count {
            guard let x509 = keyward_sk_X509_value(stack, Int32(index)) else { throw .malformed("unreadable certificate") }
            let der: [UInt8]
            do {
                der = try derEncoded { i2d_X509(x509, $0) }
                certificates.append(try X509Certificate(der: der))
            } catch {
                throw .malformed("unreadable certificate")
            }
        }
        return certificates
    }

    /// Signs `content` as a SignedData with embedded content and no signed attributes — the shape
    /// of Apple's App Attest receipts — for tests and the device simulator.
    /// - Parameters:
    ///   - content: the bytes to encapsulate.
    ///   - signer: the signing certificate; `key` its private key (EC).
    ///   - otherCertificates: embedded after the signer (its issuers, a root).
    /// - Returns: the DER ContentInfo.
    /// - Throws: ``CryptoError/internalFailure(_:)`` when OpenSSL cannot sign.
    public static func sign(content: [UInt8], signer: X509Certificate, key: ECPrivateKey,
                            otherCertificates: [X509Certificate]) throws(CryptoError) -> [UInt8]
    {
        guard let extra = keyward_sk_X509_new_null() else { throw .internalFailure("sk_X509_new_null") }
        defer { keyward_sk_X509_free(extra) }
        for certificate in otherCertificates where keyward_sk_X509_push(extra, certificate.x509) <= 0 {
            throw .internalFailure("sk_X509_push")
        }
        let flags = UInt32(CMS_BINARY | CMS_NOSMIMECAP | CMS_NOATTR)
        let signed: OpaquePointer? = try withReadOnlyBIO(content) { bio in
            withExtendedLifetime((signer, key, otherCertificates)) {
                CMS_sign(signer.x509, key.key.pointer, extra, bio, flags)
            }
        }
        guard let cms = signed else {
            clearOpenSSLErrors()
            throw .internalFailure("CMS_sign")
        }
        defer { CMS_ContentInfo_free(cms) }
        return try derEncoded { i2d_CMS_ContentInfo(cms, $0) }
    }
}
