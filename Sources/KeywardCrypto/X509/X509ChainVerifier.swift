import CShims
import COpenSSL

/// Verifies a certificate chain sent by a client up to one pinned root at a caller-given time.
///
/// Policy, in order (each refusal carries an ``X509Error`` reason slug):
/// 1. The client may not bring an anchor: a leaf or intermediate that is self-issued, or equal
///    to the root, is refused, and so is a leaf that is a CA (`chain_untrusted`).
/// 2. Every certificate's validity period contains `at`, the root's included (an expired root is refused too;
///    RFC 5280 §6.1.3 (a)(2) checks the path, Apple's App Attest step 1 checks the chain).
/// 3. OpenSSL's X509_verify_cert(3) builds and judges the path (signatures, CA flags, key usage,
///    path length, unknown critical extensions) with only the pinned root trusted and
///    `X509_VERIFY_PARAM_set_time(at)`. The built path must be exactly leaf ← intermediates (in
///    the order given) ← root: unused or reordered certificates are refused.
///
/// Intermediates lists that passed step 3 are remembered (exact DER, bounded), so a later chain
/// with the same intermediates pays one signature check (leaf against its issuer) plus step 1–2.
/// Any doubt on that short path falls back to the full verification, which decides.
public final class X509ChainVerifier: Sendable {
    /// The pinned root.
    public let trustedRoot: X509Certificate
    private let store: X509TrustStore
    private let memo: IntermediateMemo

    /// - Parameters:
    ///   - trustedRoot: the only anchor (e.g. Apple's App Attestation Root CA).
    ///   - memoCapacity: how many distinct intermediates lists to remember (0 disables the memo).
    public init(trustedRoot: X509Certificate, memoCapacity: Int = 16) {
        self.trustedRoot = trustedRoot
        store = X509TrustStore(root: trustedRoot)
        memo = IntermediateMemo(capacity: memoCapacity)
    }

    /// Verifies `leaf ← intermediates… ← trustedRoot` at `at`.
    /// - Parameters:
    ///   - leaf: the end-entity certificate (App Attest's credCert).
    ///   - intermediates: the client's other certificates, issuer of the leaf first.
    ///   - at: verification time, unix seconds.
    /// - Throws: ``X509Error/untrusted(_:)`` (also for more than ``maxIntermediates``),
    ///   ``X509Error/expired``, ``X509Error/notYetValid``.
    public func verify(leaf: X509Certificate, intermediates: [X509Certificate], at: Int64) throws(X509Error) {
        guard intermediates.count <= X509ChainVerifier.maxIntermediates else { throw .untrusted("too many intermediates") }
        try refuseClientAnchors(leaf: leaf, intermediates: intermediates)
        try checkValidity([leaf] + intermediates + [trustedRoot], at: at)
        let key = intermediates.map(\.der)
        if !intermediates.isEmpty, memo.contains(key), leafVerifiesUnderMemoizedIssuer(leaf, issuer: intermediates[0]) {
            return
        }
        try verifyWithOpenSSL(leaf: leaf, intermediates: intermediates, at: at)
        if !intermediates.isEmpty, intermediates.allSatisfy({ !$0.hasNameConstraints }), !trustedRoot.hasNameConstraints {
            memo.insert(key)
        }
    }

    /// Longest intermediates list considered (bounds the work a client can ask for; App Attest sends one).
    public static let maxIntermediates = 8

    /// Number of remembered intermediates lists (for tests and metrics).
    public var memoizedChainCount: Int { memo.count }

    private func refuseClientAnchors(leaf: X509Certificate, intermediates: [X509Certificate]) throws(X509Error) {
        // The leaf is an end entity (App Attest's credCert): a CA presented as the leaf — Apple's
        // own intermediate, say — would otherwise chain to the root on its own.
        if leaf.isCA { throw .untrusted("leaf certificate is a CA") }
        for certificate in [leaf] + intermediates {
            if certificate.der == trustedRoot.der || certificate.isSelfIssued {
                throw .untrusted("self-signed certificate supplied by the client")
            }
        }
    }

    private func checkValidity(_ certificates: [X509Certificate], at: Int64) throws(X509Error) {
        for certificate in certificates {
            if at < certificate.notBefore { throw .notYetValid }
            if at > certificate.notAfter { throw .expired }
        }
    }

    /// The memo's short path: the leaf is issued by `issuer` (names, key identifiers, the
    /// issuer's keyUsage: X509_check_issued(3)), carries no critical extension OpenSSL does not
    /// handle, and its signature verifies under the issuer's key.
    private func leafVerifiesUnderMemoizedIssuer(_ leaf: X509Certificate, issuer: X509Certificate) -> Bool {
        guard !leaf.hasUnhandledCriticalExtension,
              X509_check_issued(issuer.x509, leaf.x509) == X509_V_OK,
              let issuerKey = X509_get0_pubkey(issuer.x509)
        else {
            clearOpenSSLErrors()
            return false
        }
        let ok = X509_verify(leaf.x509, issuerKey) == 1
        if !ok { clearOpenSSLErrors() }
        return ok
    }

    private func verifyWithOpenSSL(leaf: X509Certificate, intermediates: [X509Certificate], at: Int64) throws(X509Error) {
        guard let untrusted = keyward_sk_X509_new_null() else { throw .untrusted("out of memory") }
        // The stack borrows the certificates (no up-ref); they outlive it through `intermediates`.
        defer { keyward_sk_X509_free(untrusted) }
        for certificate in intermediates {
            guard keyward_sk_X509_push(untrusted, certificate.x509) > 0 else { throw .untrusted("out of memory") }
        }
        guard let ctx = X509_STORE_CTX_new() else { throw .untrusted("out of memory") }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, store.pointer, leaf.x509, untrusted) == 1,
              let param = X509_STORE_CTX_get0_param(ctx)
        else {
            clearOpenSSLErrors()
            throw .untrusted("verification context")
        }
        X509_VERIFY_PARAM_set_time(param, time_t(at))

        let verified = withExtendedLifetime(intermediates) { X509_verify_cert(ctx) == 1 }
        guard verified else {
            let code = X509_STORE_CTX_get_error(ctx)
            clearOpenSSLErrors()
            throw X509ChainVerifier.error(forVerifyCode: code)
        }
        // The path OpenSSL built must use exactly what the client sent, in order, then the root.
        let chain = X509_STORE_CTX_get0_chain(ctx)
        let expected = [leaf.x509] + intermediates.map(\.x509) + [trustedRoot.x509]
        guard keyward_sk_X509_num(chain) == Int32(expected.count) else {
            throw .untrusted("intermediates not used exactly as sent")
        }
        for (index, certificate) in expected.enumerated() {
            guard let element = keyward_sk_X509_value(chain, Int32(index)), X509_cmp(element, certificate) == 0 else {
                throw .untrusted("intermediates not used exactly as sent")
            }
        }
    }

    /// Maps an X509_V_ERR_* code (openssl-verify(1), "Diagnostics") to an ``X509Error``.
    static func error(forVerifyCode code: Int32) -> X509Error {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: .notYetValid
        case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD, X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD:
            .malformed("unreadable validity period")
        default:
            .untrusted(String(cString: X509_verify_cert_error_string(Int(code))))
        }
    }
}

extension X509Certificate {
    /// Whether the certificate constrains the names below it (RFC 5280 §4.2.1.10); the memo's
    /// short path does not re-check names, so such chains always take the full path.
    var hasNameConstraints: Bool { X509_get_ext_by_NID(x509, NID_name_constraints, -1) >= 0 }
}
