import KeywardCrypto

/// What a receipt must match: the attestation it came in, or the device whose receipt it replaces.
///
/// Checks, in order (each refusal an `AppAttestError`):
/// - `receipt_type`: `ATTEST` inside an attestation; `ATTEST` or `RECEIPT` for a device's stored or
///   refreshed receipt (`receipt_type_unexpected`);
/// - `app_id`: field 2 equals the expected App ID, and for an attestation its SHA-256 is the
///   authenticatorData RP ID hash (`receipt_app_id_mismatch`);
/// - `attested_key`: field 3 is the credential certificate (`x5c[0]`, byte for byte) for an
///   attestation, and its public key is the device's key either way (`receipt_key_mismatch`);
/// - `client_hash`: for an attestation, SHA-256(authenticatorData ‖ field 4) is the nonce in the
///   credential certificate (Apple's attestation steps 2–4), and field 4 equals the clientDataHash
///   when the caller knows it (`receipt_client_hash_mismatch`);
/// - `environment`: field 7, when present, is `production` for the production AAGUID and `sandbox`
///   for the development one (`receipt_environment_mismatch`).
public struct ReceiptBinding: Sendable {
    struct Step: Sendable {
        let name: String
        let source: String
        let check: @Sendable (AppAttestReceipt) throws(AppAttestError) -> Void
    }

    let steps: [Step]

    /// Checks `receipt` against every rule in order.
    /// - Throws: `AppAttestError` with the first mismatch's reason.
    public func check(_ receipt: AppAttestReceipt) throws(AppAttestError) {
        for step in steps { try step.check(receipt) }
    }

    /// The receipt inside `attestation` (`attStmt.receipt`).
    /// - Parameters:
    ///   - attestation: the decoded attestation object.
    ///   - appID: the App ID the attestation was verified for; nil to take it from the receipt and
    ///     check only its hash against the RP ID hash (`keyward inspect`).
    ///   - clientDataHash: the clientDataHash the attestation was verified with, when known.
    /// - Throws: `AppAttestError` `.certificateMalformed`, `.nonceExtensionMissing`,
    ///   `.nonceExtensionMalformed`, `.publicKeyUnsupported` when the attestation's own credential
    ///   certificate cannot be read.
    public static func attestation(_ attestation: AttestationObject, appID: String?, clientDataHash: [UInt8]?)
        throws(AppAttestError) -> ReceiptBinding
    {
        guard let leafDER = attestation.certificates.first,
              let leaf = try? X509Certificate(der: leafDER)
        else { throw AppAttestError(.certificateMalformed, "credential certificate does not parse") }
        guard let nonceValue = leaf.extensionValue(oid: NonceExtension.oid) else {
            throw AppAttestError(.nonceExtensionMissing, "credential certificate has no nonce extension")
        }
        let nonce = try NonceExtension.nonce(fromExtensionValue: nonceValue)
        guard let key = try? leaf.publicKey() else { throw AppAttestError(.publicKeyUnsupported, "credential key is not an EC key") }
        let authData = attestation.authenticatorData
        let environment = authData.attestedCredential.flatMap { AppAttestEnvironment(aaguid: $0.aaguid) }
        return ReceiptBinding(steps: [
            typeStep(accepting: [.attest]),
            Step(name: "app_id", source: "field 2 vs RP ID hash") { receipt throws(AppAttestError) in
                if let appID, receipt.appID != appID { throw appIDMismatch("is not the attested App ID") }
                guard SHA256.hash(Array(receipt.appID.utf8)) == authData.rpIDHash else {
                    throw appIDMismatch("does not hash to the RP ID hash")
                }
            },
            Step(name: "attested_key", source: "field 3 vs x5c[0]") { receipt throws(AppAttestError) in
                guard receipt.attestedKeyCertificate == leafDER else {
                    throw AppAttestError(.receiptKeyMismatch, "receipt attested key (field 3) is not the credential certificate")
                }
                try checkKey(receipt, x962: key.x962)
            },
            Step(name: "client_hash", source: "field 4 vs nonce") { receipt throws(AppAttestError) in
                guard let clientHash = receipt.clientHash, SHA256.hash(authData.bytes + clientHash) == nonce else {
                    throw clientHashMismatch("does not produce the credential certificate's nonce")
                }
                if let clientDataHash, clientHash != clientDataHash { throw clientHashMismatch("is not the clientDataHash") }
            },
            environmentStep(environment),
        ])
    }

    /// A device's stored or refreshed receipt: the device's App ID, public key and environment.
    /// - Parameters:
    ///   - appID: the App ID stored for the device.
    ///   - publicKey: the device's 65-byte X9.62 P-256 key.
    ///   - environment: the device's App Attest environment, when known.
    public static func device(appID: String, publicKey: [UInt8], environment: AppAttestEnvironment?) -> ReceiptBinding {
        ReceiptBinding(steps: [
            typeStep(accepting: [.attest, .receipt]),
            Step(name: "app_id", source: "field 2 vs stored App ID") { receipt throws(AppAttestError) in
                guard receipt.appID == appID else { throw appIDMismatch("is not the device's App ID") }
            },
            Step(name: "attested_key", source: "field 3 vs stored key") { receipt throws(AppAttestError) in
                try checkKey(receipt, x962: publicKey)
            },
            environmentStep(environment),
        ])
    }

    private static func typeStep(accepting kinds: Set<AppAttestReceipt.Kind>) -> Step {
        Step(name: "receipt_type", source: "field 6") { receipt throws(AppAttestError) in
            guard kinds.contains(receipt.kind) else {
                throw AppAttestError(.receiptTypeUnexpected, "receipt type (field 6) \(receipt.kind.rawValue) not accepted here")
            }
        }
    }

    private static func environmentStep(_ environment: AppAttestEnvironment?) -> Step {
        Step(name: "environment", source: "field 7 vs AAGUID") { receipt throws(AppAttestError) in
            guard let environment, let named = receipt.environment else { return }
            let expected = environment == .production ? "production" : "sandbox"
            guard named == expected else {
                throw AppAttestError(.receiptEnvironmentMismatch, "receipt environment (field 7) is not the key's environment")
            }
        }
    }

    private static func checkKey(_ receipt: AppAttestReceipt, x962: [UInt8]) throws(AppAttestError) {
        guard let certificate = try? X509Certificate(der: receipt.attestedKeyCertificate),
              let key = try? certificate.publicKey(), key.x962 == x962
        else { throw AppAttestError(.receiptKeyMismatch, "receipt attested key (field 3) is not the device's key") }
    }

    private static func appIDMismatch(_ detail: String) -> AppAttestError {
        AppAttestError(.receiptAppIDMismatch, "receipt App ID (field 2) \(detail)")
    }

    private static func clientHashMismatch(_ detail: String) -> AppAttestError {
        AppAttestError(.receiptClientHashMismatch, "receipt client hash (field 4) \(detail)")
    }
}
