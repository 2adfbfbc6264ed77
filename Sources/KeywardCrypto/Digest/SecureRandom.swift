import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG (`RAND_bytes`, RAND_bytes(3)).
public enum SecureRandom {
    /// Returns `count` random bytes (`count` ≥ 0).
    ///
    /// A DRBG that cannot seed leaves no safe way forward (challenges and keys would be
    /// predictable), so that failure stops the process instead of returning weak bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { fatalError("RAND_bytes failed: the system random source is unavailable") }
        return out
    }
}
