import COpenSSL

/// AES key wrap (RFC 3394) with a 256-bit key-encryption key: JWE `A256KW` (RFC 7518 §4.4).
public enum AESKeyWrap {
    /// Unwraps `wrapped` (n + 1 64-bit blocks, n ≥ 2) with the 32-byte `kek`.
    /// - Returns: the key, 8 bytes shorter than `wrapped`.
    /// - Throws: ``CryptoError/invalidInput(_:)`` for wrong lengths,
    ///   ``CryptoError/authenticationFailed`` if the integrity check value (RFC 3394 §2.2.3) is wrong.
    public static func unwrap(kek: [UInt8], wrapped: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard kek.count == 32 else { throw .invalidInput("KEK must be 32 bytes") }
        guard wrapped.count >= 24, wrapped.count % 8 == 0, wrapped.count <= 1 << 20 else {
            throw .invalidInput("wrapped key must be a multiple of 8 bytes, at least 24")
        }
        return try run(kek: kek, input: wrapped, outputLength: wrapped.count - 8, encrypt: false)
    }

    /// Wraps `key` (a multiple of 8 bytes, at least 16) with the 32-byte `kek`.
    /// - Returns: the wrapped key, 8 bytes longer than `key`.
    /// - Throws: ``CryptoError/invalidInput(_:)`` for wrong lengths.
    public static func wrap(kek: [UInt8], key: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard kek.count == 32 else { throw .invalidInput("KEK must be 32 bytes") }
        guard key.count >= 16, key.count % 8 == 0, key.count <= 1 << 20 else {
            throw .invalidInput("key must be a multiple of 8 bytes, at least 16")
        }
        return try run(kek: kek, input: key, outputLength: key.count + 8, encrypt: true)
    }

    private static func run(kek: [UInt8], input: [UInt8], outputLength: Int, encrypt: Bool) throws(CryptoError) -> [UInt8] {
        let ctx = try CipherContext()
        // Wrap modes are refused by EVP unless explicitly allowed (EVP_EncryptInit(3), "WRAP").
        EVP_CIPHER_CTX_set_flags(ctx.pointer, Int32(EVP_CIPHER_CTX_FLAG_WRAP_ALLOW))
        let initialized = encrypt
            ? EVP_EncryptInit_ex2(ctx.pointer, Ciphers.aes256Wrap, kek, nil, nil)
            : EVP_DecryptInit_ex2(ctx.pointer, Ciphers.aes256Wrap, kek, nil, nil)
        guard initialized == 1 else {
            clearOpenSSLErrors()
            throw .internalFailure("AES key wrap init")
        }
        var output = [UInt8](repeating: 0, count: outputLength + 16)
        var written: Int32 = 0
        let updated = encrypt
            ? EVP_EncryptUpdate(ctx.pointer, &output, &written, input, Int32(input.count))
            : EVP_DecryptUpdate(ctx.pointer, &output, &written, input, Int32(input.count))
        guard updated == 1, Int(written) == outputLength else {
            clearOpenSSLErrors()
            if encrypt { throw .internalFailure("AES key wrap") }
            throw .authenticationFailed
        }
        output.removeLast(output.count - outputLength)
        return output
    }
}
