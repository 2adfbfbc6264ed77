import COpenSSL

/// Compares two byte strings in time that depends only on their lengths, not their contents
/// (`CRYPTO_memcmp`, OPENSSL_malloc(3)). Use it for MACs, tokens and challenge digests.
/// - Returns: `true` if both have the same length and bytes. Lengths are not treated as secret.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 }
    }
}
