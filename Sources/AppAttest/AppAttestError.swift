/// Why an attestation or assertion was refused: a stable reason slug for logs and metrics, and a
/// description for people. Neither ever contains the submitted bytes, keys or hashes.
public struct AppAttestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reason slugs. Each names the one check that failed.
    public enum Code: String, Sendable, CaseIterable {
        // Decoding (before any of Apple's steps).
        case malformedBase64 = "malformed_base64"
        case malformedCBOR = "malformed_cbor"
        case attestationMalformed = "malformed_attestation"
        case assertionMalformed = "malformed_assertion"
        case authDataMalformed = "malformed_auth_data"
        case fmtUnexpected = "fmt_unexpected"
        case certificateMalformed = "malformed_certificate"
        // Attestation, Apple step 1.
        case chainLengthInvalid = "chain_length_invalid"
        case chainUntrusted = "chain_untrusted"
        case certificateExpired = "certificate_expired"
        case certificateNotYetValid = "certificate_not_yet_valid"
        // Attestation, Apple steps 2–4.
        case nonceExtensionMissing = "nonce_extension_missing"
        case nonceExtensionMalformed = "malformed_nonce_extension"
        case nonceMismatch = "nonce_mismatch"
        // Attestation, Apple step 5.
        case publicKeyUnsupported = "public_key_unsupported"
        case keyIDMismatch = "key_id_mismatch"
        // Attestation step 6, assertion step 4.
        case appIDMismatch = "app_id_mismatch"
        // Attestation steps 7–9.
        case counterNotZero = "counter_not_zero"
        case aaguidMismatch = "aaguid_mismatch"
        case credentialIDMismatch = "credential_id_mismatch"
        // Assertion steps 3 and 5.
        case signatureInvalid = "signature_invalid"
        case counterReplay = "counter_replay"
        // Receipts (Apple, "Assessing fraud risk"): the envelope, its signer, its fields, and each
        // field against the attestation or device it belongs to.
        case receiptMalformed = "receipt_malformed"
        case receiptSignatureInvalid = "receipt_signature_invalid"
        case receiptSignerUnexpected = "receipt_signer_unexpected"
        case receiptChainUntrusted = "receipt_chain_untrusted"
        case receiptCertificateExpired = "receipt_certificate_expired"
        case receiptCertificateNotYetValid = "receipt_certificate_not_yet_valid"
        case receiptFieldsMalformed = "receipt_fields_malformed"
        case receiptExpired = "receipt_expired"
        case receiptBeforeCreation = "receipt_before_creation"
        case receiptTypeUnexpected = "receipt_type_unexpected"
        case receiptAppIDMismatch = "receipt_app_id_mismatch"
        case receiptKeyMismatch = "receipt_key_mismatch"
        case receiptClientHashMismatch = "receipt_client_hash_mismatch"
        case receiptEnvironmentMismatch = "receipt_environment_mismatch"
    }

    /// What failed.
    public let code: Code
    /// A sentence for operators; names the field, never its value.
    public let description: String

    /// The reason slug (`code.rawValue`), e.g. `nonce_mismatch`.
    public var reason: String { code.rawValue }

    /// An error with `code` and a description that names fields, never their values.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
