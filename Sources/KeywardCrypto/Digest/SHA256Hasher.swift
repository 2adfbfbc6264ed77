import COpenSSL

/// Incremental SHA-256 (FIPS 180-4) for data that arrives in pieces, e.g. a request body hashed
/// while it streams in (the per-request assertion signs `b64url(SHA256(body))`).
///
/// One hasher per message, used from one thread at a time (not `Sendable`).
public final class SHA256Hasher {
    private let ctx: OpaquePointer
    private var finished = false

    /// A fresh hasher.
    public init() {
        // Allocation failure of a few hundred bytes: nothing sensible to continue with.
        guard let ctx = EVP_MD_CTX_new(), EVP_DigestInit_ex2(ctx, Digests.sha256, nil) == 1 else {
            fatalError("EVP_MD_CTX_new / EVP_DigestInit_ex2 failed")
        }
        self.ctx = ctx
    }

    deinit { EVP_MD_CTX_free(ctx) }

    /// Adds `bytes` to the message. Calls after ``finalize()`` are ignored.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard !finished, !bytes.isEmpty else { return }
        EVP_DigestUpdate(ctx, bytes.baseAddress, bytes.count)
    }

    /// Adds `bytes` to the message.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest of everything added. The hasher is spent afterwards: a second call
    /// returns the same digest.
    public func finalize() -> [UInt8] {
        if let digest { return digest }
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(ctx, &out, &length) == 1, length == 32 else { fatalError("EVP_DigestFinal_ex failed") }
        finished = true
        digest = out
        return out
    }

    private var digest: [UInt8]?
}
