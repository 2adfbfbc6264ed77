import CBOR

/// An App Attest attestation object, decoded once (Apple, "Validating apps that connect to your
/// server", "Verify the attestation"): the CBOR map `{fmt: "apple-appattest", attStmt: {x5c: [leaf DER,
/// intermediate DER], receipt: bytes}, authData: bytes}`.
///
/// Decoding is strict: exactly those keys, the strict CBOR decoder, authData parsed with the
/// attestation layout. The certificates stay DER here; the verifier parses them.
public struct AttestationObject: Sendable, Equatable {
    /// The only format App Attest uses.
    public static let appleFormat = "apple-appattest"

    /// `fmt`: always `apple-appattest` once decoded.
    public let format: String
    /// `attStmt.x5c`: DER certificates, the credential (leaf) certificate first.
    public let certificates: [[UInt8]]
    /// `attStmt.receipt`: Apple's receipt (PKCS #7), kept for fraud-metric requests; not verified here.
    public let receipt: [UInt8]
    /// `authData`, parsed.
    public let authenticatorData: AuthenticatorData

    /// Bounds for the decoder: a real object is ~5 KB, three levels deep, with two certificates.
    static let decoderLimits = CBORDecoder.Limits(maxDepth: 4, maxStringLength: 64 * 1024, maxCollectionCount: 8)

    /// Decodes `bytes` (the attestation object, after base64).
    /// - Throws: `AppAttestError` `.malformedCBOR` (not strict, well-formed CBOR), `.fmtUnexpected`,
    ///   `.attestationMalformed` (missing, extra or mistyped fields), `.authDataMalformed`.
    public init(bytes: [UInt8]) throws(AppAttestError) {
        let root: CBORValue
        do {
            root = try CBORDecoder(limits: Self.decoderLimits).decode(bytes)
        } catch {
            throw AppAttestError(.malformedCBOR, "attestation object: \(error.description)")
        }
        guard let entries = root.mapEntries else { throw Self.malformed("not a CBOR map") }
        guard entries.count == 3, let fmt = root[textKey: "fmt"], let statement = root[textKey: "attStmt"],
            let authData = root[textKey: "authData"]?.bytesValue
        else { throw Self.malformed("expected exactly fmt, attStmt and authData") }
        guard let format = fmt.textValue, format == Self.appleFormat else {
            throw AppAttestError(.fmtUnexpected, "fmt is not \(Self.appleFormat)")
        }
        guard let statementEntries = statement.mapEntries, statementEntries.count == 2,
            let x5c = statement[textKey: "x5c"]?.arrayValue, let receipt = statement[textKey: "receipt"]?.bytesValue
        else { throw Self.malformed("attStmt must hold exactly x5c and receipt") }
        var certificates: [[UInt8]] = []
        for element in x5c {
            guard let der = element.bytesValue, !der.isEmpty else { throw Self.malformed("x5c holds a non-certificate") }
            certificates.append(der)
        }
        self.format = format
        self.certificates = certificates
        self.receipt = receipt
        self.authenticatorData = try AuthenticatorData(bytes: authData, layout: .attestation)
    }

    private static func malformed(_ detail: String) -> AppAttestError {
        AppAttestError(.attestationMalformed, "attestation object: \(detail)")
    }
}
