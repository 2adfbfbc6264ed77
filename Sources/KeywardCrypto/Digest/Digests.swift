import COpenSSL

/// Digest algorithms fetched once (OpenSSL 3 "explicit fetching", crypto(7)): fetching per call
/// costs a method-store lookup and a lock, which shows in per-request paths.
enum Digests {
    nonisolated(unsafe) static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)
    nonisolated(unsafe) static let sha384: OpaquePointer? = EVP_MD_fetch(nil, "SHA384", nil)
    nonisolated(unsafe) static let sha1: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil)

    /// One-shot digest of `bytes` with `md` into an `outputLength`-byte array.
    static func hash(_ bytes: UnsafeRawBufferPointer, md: OpaquePointer?, outputLength: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: outputLength)
        var written: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            EVP_Digest(bytes.baseAddress, bytes.count, buffer.baseAddress, &written, md, nil)
        }
        // Only fails on allocation failure or a missing default provider: nothing a caller could handle.
        guard ok == 1, Int(written) == outputLength else { fatalError("EVP_Digest failed") }
        return out
    }
}

/// SHA-256 (FIPS 180-4).
public enum SHA256 {
    /// The 32-byte SHA-256 digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { Digests.hash($0, md: Digests.sha256, outputLength: 32) }
    }

    /// The 32-byte SHA-256 digest of raw memory (for hashing slices without copying).
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        Digests.hash(bytes, md: Digests.sha256, outputLength: 32)
    }
}

/// SHA-384 (FIPS 180-4), the hash of ECDSA over P-384.
public enum SHA384 {
    /// The 48-byte SHA-384 digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { Digests.hash($0, md: Digests.sha384, outputLength: 48) }
    }
}
