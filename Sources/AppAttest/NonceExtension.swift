/// The App Attest nonce certificate extension, OID 1.2.840.113635.100.8.2 (Apple, "Validating apps
/// that connect to your server", attestation step 4).
///
/// Its value must be exactly `SEQUENCE { [1] EXPLICIT { OCTET STRING (32 bytes) } }` in DER with
/// short-form lengths only — `30 24 A1 22 04 20 <32 bytes>` — and nothing else: no long-form or
/// indefinite lengths, no extra elements, no trailing bytes. A looser parse is how a forged nonce
/// gets past a verifier that reads the extension differently from the one that wrote it.
public enum NonceExtension {
    /// The extension's OID, dotted.
    public static let oid = "1.2.840.113635.100.8.2"

    /// The 32-byte nonce inside `value` (the extnValue OCTET STRING's contents).
    /// - Throws: `AppAttestError` `.nonceExtensionMalformed`.
    public static func nonce(fromExtensionValue value: [UInt8]) throws(AppAttestError) -> [UInt8] {
        var reader = value[...]
        let sequence = try element(&reader, tag: 0x30, what: "SEQUENCE")
        guard reader.isEmpty else { throw malformed("bytes after the SEQUENCE") }
        var inSequence = sequence
        let tagged = try element(&inSequence, tag: 0xa1, what: "[1] EXPLICIT")
        guard inSequence.isEmpty else { throw malformed("more than one element in the SEQUENCE") }
        var inTagged = tagged
        let octets = try element(&inTagged, tag: 0x04, what: "OCTET STRING")
        guard inTagged.isEmpty else { throw malformed("more than one element in [1]") }
        guard octets.count == 32 else { throw malformed("nonce is not 32 bytes") }
        return Array(octets)
    }

    /// Reads one TLV with the given tag and a short-form length (< 128), and returns its contents.
    private static func element(_ input: inout ArraySlice<UInt8>, tag: UInt8, what: String) throws(AppAttestError)
        -> ArraySlice<UInt8>
    {
        guard input.count >= 2, input[input.startIndex] == tag else { throw malformed("expected \(what)") }
        let length = input[input.startIndex + 1]
        guard length < 0x80 else { throw malformed("\(what) length is not short-form DER") }
        let start = input.startIndex + 2
        guard Int(length) <= input.endIndex - start else { throw malformed("\(what) length exceeds the data") }
        let contents = input[start..<(start + Int(length))]
        input = input[(start + Int(length))...]
        return contents
    }

    private static func malformed(_ detail: String) -> AppAttestError {
        AppAttestError(.nonceExtensionMalformed, "nonce extension: \(detail)")
    }
}
