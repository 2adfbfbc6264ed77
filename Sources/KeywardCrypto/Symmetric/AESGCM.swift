import COpenSSL

/// AES-256-GCM (NIST SP 800-38D) with a 96-bit IV and a 128-bit tag, as JWE `A256GCM` uses it
/// (RFC 7518 §5.3).
public enum AESGCM {
    /// Bytes of the key (32), IV (12) and tag (16).
    public static let keyLength = 32, ivLength = 12, tagLength = 16

    /// Decrypts and authenticates.
    /// - Parameters: key 32 bytes; iv 12 bytes; tag 16 bytes; aad any length (may be empty).
    /// - Returns: the plaintext, as long as `ciphertext`.
    /// - Throws: ``CryptoError/invalidInput(_:)`` for wrong lengths,
    ///   ``CryptoError/authenticationFailed`` if the tag does not verify (no plaintext is released).
    public static func open(key: [UInt8], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8], aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        try checkLengths(key: key, iv: iv)
        guard tag.count == tagLength else { throw .invalidInput("GCM tag must be 16 bytes") }
        let ctx = try CipherContext()
        var tag = tag
        guard EVP_DecryptInit_ex2(ctx.pointer, Ciphers.aes256GCM, key, iv, nil) == 1,
              try update(ctx, aad: aad, decrypt: true),
              EVP_CIPHER_CTX_ctrl(ctx.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), &tag) == 1
        else {
            clearOpenSSLErrors()
            throw .internalFailure("AES-GCM init")
        }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        if !ciphertext.isEmpty {
            guard ciphertext.count <= Int(Int32.max),
                  EVP_DecryptUpdate(ctx.pointer, &plaintext, &written, ciphertext, Int32(ciphertext.count)) == 1
            else {
                clearOpenSSLErrors()
                throw .internalFailure("AES-GCM update")
            }
        }
        var finalLength: Int32 = 0
        let ok = plaintext.withUnsafeMutableBufferPointer { buffer in
            EVP_DecryptFinal_ex(ctx.pointer, buffer.baseAddress.map { $0 + Int(written) }, &finalLength)
        }
        guard ok == 1 else {
            clearOpenSSLErrors()
            throw .authenticationFailed
        }
        plaintext.removeLast(plaintext.count - Int(written + finalLength))
        return plaintext
    }

    /// Encrypts and authenticates.
    /// - Parameters: key 32 bytes; iv 12 bytes, never reused with the same key; aad any length.
    /// - Returns: ciphertext (as long as `plaintext`) and the 16-byte tag.
    /// - Throws: ``CryptoError/invalidInput(_:)`` for wrong lengths.
    public static func seal(key: [UInt8], iv: [UInt8], plaintext: [UInt8], aad: [UInt8]) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try checkLengths(key: key, iv: iv)
        let ctx = try CipherContext()
        guard EVP_EncryptInit_ex2(ctx.pointer, Ciphers.aes256GCM, key, iv, nil) == 1,
              try update(ctx, aad: aad, decrypt: false)
        else {
            clearOpenSSLErrors()
            throw .internalFailure("AES-GCM init")
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: Int32 = 0
        if !plaintext.isEmpty {
            guard plaintext.count <= Int(Int32.max),
                  EVP_EncryptUpdate(ctx.pointer, &ciphertext, &written, plaintext, Int32(plaintext.count)) == 1
            else { throw .internalFailure("AES-GCM update") }
        }
        var finalLength: Int32 = 0
        let ok = ciphertext.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(ctx.pointer, buffer.baseAddress.map { $0 + Int(written) }, &finalLength)
        }
        var tag = [UInt8](repeating: 0, count: tagLength)
        guard ok == 1, EVP_CIPHER_CTX_ctrl(ctx.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), &tag) == 1 else {
            clearOpenSSLErrors()
            throw .internalFailure("AES-GCM final")
        }
        ciphertext.removeLast(ciphertext.count - Int(written + finalLength))
        return (ciphertext, tag)
    }

    private static func checkLengths(key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        guard key.count == keyLength else { throw .invalidInput("AES-256 key must be 32 bytes") }
        guard iv.count == ivLength else { throw .invalidInput("GCM IV must be 12 bytes") }
    }

    /// Feeds the additional authenticated data (an update with no output buffer).
    private static func update(_ ctx: borrowing CipherContext, aad: [UInt8], decrypt: Bool) throws(CryptoError) -> Bool {
        guard !aad.isEmpty else { return true }
        guard aad.count <= Int(Int32.max) else { throw .invalidInput("AAD too long") }
        var ignored: Int32 = 0
        return decrypt
            ? EVP_DecryptUpdate(ctx.pointer, nil, &ignored, aad, Int32(aad.count)) == 1
            : EVP_EncryptUpdate(ctx.pointer, nil, &ignored, aad, Int32(aad.count)) == 1
    }
}
