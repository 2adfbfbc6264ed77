import COpenSSL

/// An `X509_STORE` holding exactly one pinned root and no lookup methods (no files, no
/// directories), so nothing can add anchors after construction. OpenSSL stores are safe for
/// concurrent verifications (X509_STORE_lock(3) guards their internal state).
final class X509TrustStore: @unchecked Sendable {
    let pointer: OpaquePointer

    init(root: X509Certificate) {
        guard let store = X509_STORE_new(), X509_STORE_add_cert(store, root.x509) == 1 else {
            // Allocation failure at start-up: nothing sensible to continue with.
            fatalError("X509_STORE_new / X509_STORE_add_cert failed")
        }
        pointer = store
    }

    deinit { X509_STORE_free(pointer) }
}
