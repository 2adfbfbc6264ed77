import COpenSSL

/// Owns one `EVP_PKEY` reference for the lifetime of a key value.
///
/// OpenSSL 3 allows an `EVP_PKEY` to be used by many threads at once as long as nobody modifies
/// it (openssl-threads(7)); keys here are never modified after construction, hence the
/// unchecked `Sendable`.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer` (one reference).
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Adds a reference to a key another object owns (for example a certificate's key).
    init?(retaining pointer: OpaquePointer) {
        guard EVP_PKEY_up_ref(pointer) == 1 else { return nil }
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }
}
