import KeywardCrypto

/// Verifies App Attest receipts (Apple, "Assessing fraud risk"): a CMS SignedData whose content is
/// the receipt's fields, signed under Apple Root CA - G3.
///
/// Steps, in order, each refusal an `AppAttestError`:
/// 1. `envelope`: one DER SignedData, one signer, embedded content, its signature verifying over the
///    content (OpenSSL's CMS_verify(3); `receipt_malformed`, `receipt_signature_invalid`).
/// 2. `signer`: the signing certificate carries Apple's extension 1.2.840.113635.100.12.15, present
///    on every receipt signer seen (2020, 2023 and 2024 generations) and absent from the other
///    certificates Apple issues under the same root, so a certificate a developer holds under
///    Apple Root CA - G3 cannot sign a receipt (`receipt_signer_unexpected`).
/// 3. `certificate_chain`: signer ← the embedded intermediates ← the pinned root, every
///    certificate valid at the verification time (`X509ChainVerifier`; the root Apple embeds is
///    ignored, only the pinned one is trusted; `receipt_chain_untrusted`,
///    `receipt_certificate_expired`, `receipt_certificate_not_yet_valid`).
/// 4. `fields`: the payload read by ``ReceiptPayload`` into ``AppAttestReceipt``
///    (`receipt_fields_malformed`, `receipt_type_unexpected`).
/// 5. `creation`: the verification time is not before the creation time (field 12), less
///    `creationLeewaySeconds` for a clock behind Apple's (`receipt_before_creation`): a receipt is not
///    valid before it exists, though its certificates already were.
/// 6. `expiration`: the verification time is not after the expiration time (field 21; `receipt_expired`).
///
/// ``ReceiptBinding`` then matches the fields to the attestation or device the receipt belongs to.
public struct ReceiptVerifier: Sendable {
    /// The extension every receipt signing certificate carries (step 2).
    public static let signerMarkerOID = "1.2.840.113635.100.12.15"

    /// How far the verification time may be before the receipt's creation time, seconds: the
    /// verifying host's clock may lag Apple's by this much when a fresh receipt arrives.
    public static let creationLeewaySeconds: Int64 = 60

    let chainVerifier: X509ChainVerifier

    /// - Parameter trustedRoot: the anchor; Apple Root CA - G3 unless code (tests, the simulator) passes another.
    public init(trustedRoot: X509Certificate = AppleRootCAG3.certificate) {
        chainVerifier = X509ChainVerifier(trustedRoot: trustedRoot)
    }

    /// Verifies steps 1–6 at `time` (unix seconds).
    /// - Returns: the receipt's fields.
    /// - Throws: `AppAttestError` with the first failing step's reason.
    public func verify(receipt: [UInt8], at time: Int64) throws(AppAttestError) -> AppAttestReceipt {
        let envelope = try Self.envelope(receipt)
        try Self.checkSigner(envelope)
        try checkChain(envelope, at: time)
        let fields = try AppAttestReceipt(payload: envelope.content)
        try Self.checkCreation(fields, at: time)
        try Self.checkExpiration(fields, at: time)
        return fields
    }

    /// Verifies and then matches the fields to `binding`.
    /// - Throws: `AppAttestError`: a step's reason, then ``ReceiptBinding/check(_:)``'s.
    public func verify(receipt: [UInt8], at time: Int64, binding: ReceiptBinding) throws(AppAttestError) -> AppAttestReceipt {
        let fields = try verify(receipt: receipt, at: time)
        try binding.check(fields)
        return fields
    }

    /// Runs every step it can and reports each (for `keyward inspect receipt`), with the fields when
    /// they could be read. A step that cannot run because an earlier one could not produce its input
    /// is `notRun`; otherwise every step runs, so all that is wrong shows at once.
    public func inspect(receipt: [UInt8], at time: Int64, binding: ReceiptBinding?) -> (report: VerificationReport, fields: AppAttestReceipt?) {
        var steps: [VerificationReport.Step] = []
        func record(_ name: String, _ source: String, _ body: () throws(AppAttestError) -> Void) {
            do throws(AppAttestError) {
                try body()
                steps.append(.init(name: name, source: source, outcome: .passed))
            } catch {
                steps.append(.init(name: name, source: source, outcome: .failed(error)))
            }
        }
        let doc = "Assessing fraud risk"
        var envelope: CMSSignedData?
        record("envelope", "CMS SignedData (RFC 5652)") { () throws(AppAttestError) in envelope = try Self.envelope(receipt) }
        var fields: AppAttestReceipt?
        if let envelope {
            record("signer", "receipt signing certificate") { () throws(AppAttestError) in try Self.checkSigner(envelope) }
            record("certificate_chain", "pinned Apple Root CA - G3") { () throws(AppAttestError) in try checkChain(envelope, at: time) }
            record("fields", doc) { () throws(AppAttestError) in fields = try AppAttestReceipt(payload: envelope.content) }
        } else {
            for name in ["signer", "certificate_chain", "fields"] { steps.append(.init(name: name, source: doc, outcome: .notRun)) }
        }
        let bindingSteps = binding?.steps ?? []
        if let fields {
            record("creation", "field 12") { () throws(AppAttestError) in try Self.checkCreation(fields, at: time) }
            record("expiration", "field 21") { () throws(AppAttestError) in try Self.checkExpiration(fields, at: time) }
            for step in bindingSteps { record(step.name, step.source) { () throws(AppAttestError) in try step.check(fields) } }
        } else {
            steps.append(.init(name: "creation", source: "field 12", outcome: .notRun))
            steps.append(.init(name: "expiration", source: "field 21", outcome: .notRun))
            for step in bindingSteps { steps.append(.init(name: step.name, source: step.source, outcome: .notRun)) }
        }
        return (VerificationReport(kind: "receipt", steps: steps), fields)
    }

    private static func envelope(_ receipt: [UInt8]) throws(AppAttestError) -> CMSSignedData {
        do {
            return try CMSSignedData(der: receipt)
        } catch .signatureInvalid {
            throw AppAttestError(.receiptSignatureInvalid, "receipt signature does not verify over its content")
        } catch {
            throw AppAttestError(.receiptMalformed, "receipt: \(error.description)")
        }
    }

    private static func checkSigner(_ envelope: CMSSignedData) throws(AppAttestError) {
        guard envelope.signer.extensionValue(oid: signerMarkerOID) != nil else {
            throw AppAttestError(.receiptSignerUnexpected, "receipt signer lacks Apple's receipt signing extension")
        }
    }

    /// The signer, then each embedded certificate that issued the previous one (by name), stopping at
    /// a self-signed one: Apple embeds its root, which is never trusted from the envelope.
    private func checkChain(_ envelope: CMSSignedData, at time: Int64) throws(AppAttestError) {
        var intermediates: [X509Certificate] = []
        var candidates = envelope.otherCertificates.filter { !$0.isSelfSigned }
        var current = envelope.signer
        while let index = candidates.firstIndex(where: { $0.subject == current.issuer }) {
            current = candidates.remove(at: index)
            intermediates.append(current)
        }
        do {
            try chainVerifier.verify(leaf: envelope.signer, intermediates: intermediates, at: time)
        } catch {
            switch error {
            case .expired: throw AppAttestError(.receiptCertificateExpired, "a receipt certificate is expired at the verification time")
            case .notYetValid:
                throw AppAttestError(.receiptCertificateNotYetValid, "a receipt certificate is not yet valid at the verification time")
            case .untrusted, .malformed: throw AppAttestError(.receiptChainUntrusted, "receipt \(error.description)")
            }
        }
    }

    private static func checkCreation(_ fields: AppAttestReceipt, at time: Int64) throws(AppAttestError) {
        guard time >= fields.creationTime - creationLeewaySeconds else {
            throw AppAttestError(.receiptBeforeCreation, "the verification time is before the receipt's creation time (field 12)")
        }
    }

    private static func checkExpiration(_ fields: AppAttestReceipt, at time: Int64) throws(AppAttestError) {
        guard time <= fields.expirationTime else {
            throw AppAttestError(.receiptExpired, "receipt expiration time (field 21) is before the verification time")
        }
    }
}
