import KeywardCrypto

/// Session key ids (`kid`, RFC 7515 §4.1.4): the first 16 hex characters of SHA-256 over the
/// public key's SubjectPublicKeyInfo DER. Derived, not configured, so a key always carries the
/// same id on every instance and after every restart, and rotating keys needs no bookkeeping.
public enum SessionKeyID {
    public static func derive(_ publicKey: ECPublicKey) -> String {
        String(Hex.encode(SHA256.hash(publicKey.spkiDER)).prefix(16))
    }
}
