import KeywardCrypto

/// Decrypts and verifies a classic Play Integrity token locally, without Google.
///
/// A classic token is a compact JWE (`alg` `A256KW`, `enc` `A256GCM`) whose plaintext is a compact JWS
/// (`alg` `ES256`) whose payload is the verdict JSON (Google, "Classic request" → "Decrypt and verify the
/// integrity verdict"). Only exactly those algorithms are accepted: the header never chooses the key or
/// weakens the check (no `none`, no `dir`, no unencrypted JWS, no compression, no critical extensions).
public struct ClassicTokenDecoder: Sendable {
    /// Longest accepted token, in characters (tokens over 16 KiB are refused before they cost anything).
    public static let maximumTokenLength = 16 * 1024

    /// The app's decryption and verification keys.
    public let keys: ClassicIntegrityKeys

    /// A decoder for tokens made for the app whose keys these are.
    public init(keys: ClassicIntegrityKeys) {
        self.keys = keys
    }

    /// - Parameter token: the compact JWE as the app sent it (ASCII).
    /// - Returns: the verdict, decoded but not yet judged (run ``VerdictPolicy`` next).
    /// - Throws: ``PlayIntegrityError/rejected(reason:detail:)`` with one of `token_too_large`, `token_malformed`,
    ///   `jwe_algorithm_unsupported`, `jwe_encryption_unsupported`, `jwe_compression_unsupported`,
    ///   `jwe_critical_header`, `jwe_key_unwrap_failed` (another decryption key), `jwe_decryption_failed`
    ///   (bad tag or IV), `jws_algorithm_unsupported` (including `none`), `jws_critical_header`,
    ///   `jws_signature_invalid` (another signing key or altered payload), `verdict_malformed`.
    public func decode(_ token: String) throws(PlayIntegrityError) -> IntegrityVerdict {
        let jws = try decrypt(token)
        let payload = try verify(jws)
        return try IntegrityVerdict.decode(json: payload)
    }

    /// RFC 7516 §5.2 for the one algorithm pair Google uses: returns the plaintext, the compact JWS (ASCII).
    func decrypt(_ token: String) throws(PlayIntegrityError) -> Substring {
        guard token.utf8.count <= Self.maximumTokenLength else {
            throw .rejected(reason: "token_too_large", detail: "the token is over \(Self.maximumTokenLength) bytes")
        }
        let jwe = try CompactSerialization(Substring(token), count: 5, what: "JWE")
        let header = try jwe.header(what: "JWE", slugPrefix: "jwe")
        // RFC 7518 §4.4 (A256KW) and §5.3 (A256GCM); nothing else is what Google sends.
        guard header.algorithm == "A256KW" else {
            throw .rejected(reason: "jwe_algorithm_unsupported", detail: "JWE alg is \(header.algorithm?.printableLabel ?? "absent"), not A256KW")
        }
        guard header.encryption == "A256GCM" else {
            throw .rejected(reason: "jwe_encryption_unsupported", detail: "JWE enc is \(header.encryption?.printableLabel ?? "absent"), not A256GCM")
        }
        guard !header.hasCompression else {
            throw .rejected(reason: "jwe_compression_unsupported", detail: "JWE header asks for compression")
        }
        let wrappedKey = try jwe.bytes(1, what: "JWE encrypted key")
        let iv = try jwe.bytes(2, what: "JWE initialization vector")
        let ciphertext = try jwe.bytes(3, what: "JWE ciphertext")
        let tag = try jwe.bytes(4, what: "JWE authentication tag")
        // RFC 7518 §4.4: the CEK for A256GCM is 256 bits, wrapped into 40 bytes (RFC 3394 adds 8).
        guard wrappedKey.count == 40 else {
            throw .rejected(reason: "token_malformed", detail: "JWE encrypted key is \(wrappedKey.count) bytes, not 40")
        }
        // RFC 7518 §5.3: a 96-bit IV and a 128-bit tag.
        guard iv.count == 12, tag.count == 16 else {
            throw .rejected(reason: "token_malformed", detail: "JWE IV or tag has the wrong length")
        }
        let contentKey: [UInt8]
        do {
            contentKey = try AESKeyWrap.unwrap(kek: keys.decryptionKey, wrapped: wrappedKey)
        } catch {
            throw .rejected(reason: "jwe_key_unwrap_failed", detail: "the content key was not wrapped with the configured decryption key")
        }
        // RFC 7516 §5.2 step 14: AAD = ASCII(BASE64URL(UTF8(JWE Protected Header))), the segment as sent.
        let aad = Array(jwe.encoded[0].utf8)
        let plaintext: [UInt8]
        do {
            plaintext = try AESGCM.open(key: contentKey, iv: iv, ciphertext: ciphertext, tag: tag, aad: aad)
        } catch {
            throw .rejected(reason: "jwe_decryption_failed", detail: "the JWE authentication tag does not verify")
        }
        guard let text = String(validating: plaintext, as: UTF8.self) else {
            throw .rejected(reason: "token_malformed", detail: "the JWE plaintext is not text")
        }
        return Substring(text)
    }

    /// RFC 7515 §5.2 for ES256 (RFC 7518 §3.4): returns the verified payload bytes.
    func verify(_ jws: Substring) throws(PlayIntegrityError) -> [UInt8] {
        let parts = try CompactSerialization(jws, count: 3, what: "JWS")
        let header = try parts.header(what: "JWS", slugPrefix: "jws")
        guard header.algorithm == "ES256" else {
            throw .rejected(reason: "jws_algorithm_unsupported", detail: "JWS alg is \(header.algorithm?.printableLabel ?? "absent"), not ES256")
        }
        let signature = try parts.bytes(2, what: "JWS signature")
        // The signing input is the two first segments exactly as sent, joined by a dot (RFC 7515 §5.1 step 5).
        let signingInput = Array(parts.encoded[0].utf8) + [UInt8(ascii: ".")] + Array(parts.encoded[1].utf8)
        guard signature.count == 64, keys.verificationKey.isValidSignature(raw: signature, message: signingInput) else {
            throw .rejected(reason: "jws_signature_invalid", detail: "the JWS signature does not verify with the configured verification key")
        }
        return try parts.bytes(1, what: "JWS payload")
    }
}
