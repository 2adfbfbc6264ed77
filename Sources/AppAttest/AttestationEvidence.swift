import KeywardCrypto

/// One attestation, decoded once, with everything Apple's steps compare already derived from it.
/// The checks read only this value: none goes back to the raw bytes.
struct AttestationEvidence: Sendable {
    let object: AttestationObject
    /// x5c[0], the credential certificate.
    let leaf: X509Certificate
    /// x5c[1...], normally exactly Apple's intermediate.
    let intermediates: [X509Certificate]
    /// The key id the app sent (32 bytes).
    let keyID: [UInt8]
    /// SHA-256(authData ‖ clientDataHash): Apple steps 2–3.
    let expectedNonce: [UInt8]
    /// The nonce the leaf certifies (extension 1.2.840.113635.100.8.2), or why it cannot be read.
    let certifiedNonce: Result<[UInt8], AppAttestError>
    /// The leaf's P-256 public key, or why it is not one.
    let leafKey: Result<ECPublicKey, AppAttestError>
    /// The verification time, unix seconds.
    let time: Int64

    /// Decodes `attestation` and derives the compared values.
    /// - Throws: `AppAttestError` with a decoding reason (`malformed_cbor`, `fmt_unexpected`,
    ///   `malformed_attestation`, `malformed_auth_data`, `malformed_certificate`).
    init(attestation: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], at time: Int64,
         intermediateCache: BoundedCache<X509Certificate>) throws(AppAttestError) {
        let object = try AttestationObject(bytes: attestation)
        guard let leafDER = object.certificates.first else {
            throw AppAttestError(.attestationMalformed, "attestation object: x5c is empty")
        }
        let leaf = try Self.certificate(leafDER)
        var intermediates: [X509Certificate] = []
        for der in object.certificates.dropFirst() {
            // Apple's intermediate recurs in every attestation: parse it once (exact DER as the key).
            intermediates.append(try intermediateCache.value(for: der) { () throws(AppAttestError) in try Self.certificate(der) })
        }
        self.object = object
        self.leaf = leaf
        self.intermediates = intermediates
        self.keyID = keyID
        self.time = time
        expectedNonce = SHA256.hash(object.authenticatorData.bytes + clientDataHash)
        if let value = leaf.extensionValue(oid: NonceExtension.oid) {
            do {
                certifiedNonce = .success(try NonceExtension.nonce(fromExtensionValue: value))
            } catch {
                certifiedNonce = .failure(error)
            }
        } else {
            certifiedNonce = .failure(AppAttestError(.nonceExtensionMissing, "credential certificate has no nonce extension"))
        }
        do {
            let key = try leaf.publicKey()
            leafKey = key.curve == .p256
                ? .success(key)
                : .failure(AppAttestError(.publicKeyUnsupported, "credential key is not P-256"))
        } catch {
            leafKey = .failure(AppAttestError(.publicKeyUnsupported, "credential key is not an EC key"))
        }
    }

    /// One x5c entry as a certificate, or `malformed_certificate`.
    private static func certificate(_ der: [UInt8]) throws(AppAttestError) -> X509Certificate {
        do {
            return try X509Certificate(der: der)
        } catch {
            throw AppAttestError(.certificateMalformed, "x5c: \(error.description)")
        }
    }
}
