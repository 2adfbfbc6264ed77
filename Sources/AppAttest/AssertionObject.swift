import CBOR

/// An App Attest assertion, decoded once (Apple, "Validating apps that connect to your server",
/// "Verify the assertion"): the CBOR map `{signature: DER ECDSA signature, authenticatorData: bytes}`.
public struct AssertionObject: Sendable, Equatable {
    /// The ECDSA P-256 signature, DER (X9.62 `ECDSA-Sig-Value`), as the device sent it.
    public let signature: [UInt8]
    /// `authenticatorData`, parsed with the assertion layout.
    public let authenticatorData: AuthenticatorData

    static let decoderLimits = CBORDecoder.Limits(maxDepth: 2, maxStringLength: 4096, maxCollectionCount: 4)

    /// Decodes `bytes` (the assertion, after base64).
    /// - Throws: `AppAttestError` `.malformedCBOR`, `.assertionMalformed` (missing, extra or mistyped
    ///   fields), `.authDataMalformed`.
    public init(bytes: [UInt8]) throws(AppAttestError) {
        let root: CBORValue
        do {
            root = try CBORDecoder(limits: Self.decoderLimits).decode(bytes)
        } catch {
            throw AppAttestError(.malformedCBOR, "assertion: \(error.description)")
        }
        guard let entries = root.mapEntries, entries.count == 2,
            let signature = root[textKey: "signature"]?.bytesValue,
            let authenticatorData = root[textKey: "authenticatorData"]?.bytesValue
        else { throw AppAttestError(.assertionMalformed, "assertion: expected exactly signature and authenticatorData") }
        self.signature = signature
        self.authenticatorData = try AuthenticatorData(bytes: authenticatorData, layout: .assertion)
    }
}
