import CBOR

/// App Attest's authenticatorData, parsed (WebAuthn §6.1 layout, as Apple uses it).
///
/// Layout (bytes): rpIdHash (32) ‖ flags (1) ‖ signCount (4, big-endian) ‖ [attested credential data:
/// AAGUID (16) ‖ credentialId length L (2, big-endian) ‖ credentialId (L) ‖ credential public key (one
/// CBOR map, COSE_Key)] ‖ [extensions: one CBOR map].
///
/// Attestations always carry the attested credential data. Assertions carry none even though Apple
/// sets the AT flag on them. Newer iOS versions append a CBOR extension map, with or without the ED
/// flag: a single well-formed map is accepted there and nothing may follow it. Nothing is ever read
/// past the buffer.
public struct AuthenticatorData: Sendable, Equatable {
    /// Which object the data came from, which decides whether attested credential data follows the counter.
    public enum Layout: Sendable {
        case attestation
        case assertion
    }

    /// The attested credential data of an attestation (WebAuthn §6.5.1).
    public struct AttestedCredential: Sendable, Equatable {
        /// 16 bytes: the App Attest environment marker.
        public let aaguid: [UInt8]
        /// The credential id; App Attest makes it the key id (32 bytes).
        public let credentialID: [UInt8]
        /// The COSE_Key map (RFC 9052 §7), as decoded.
        public let credentialPublicKey: CBORValue
    }

    /// WebAuthn flag bit UP, user present (§6.1).
    public static let userPresentFlag: UInt8 = 0x01
    /// WebAuthn flag bit AT, attested credential data included (§6.1).
    public static let attestedCredentialDataFlag: UInt8 = 0x40
    /// WebAuthn flag bit ED, extension data included (§6.1).
    public static let extensionDataFlag: UInt8 = 0x80

    /// The whole authenticatorData as received: the nonce is computed over these exact bytes.
    public let bytes: [UInt8]
    /// 32 bytes: SHA-256 of the App ID (`<team id>.<bundle id>`).
    public let rpIDHash: [UInt8]
    /// The flags byte.
    public let flags: UInt8
    /// The signature counter: 0 in an attestation, increasing with each assertion.
    public let counter: UInt32
    /// Present for `.attestation`, nil for `.assertion`.
    public let attestedCredential: AttestedCredential?
    /// The trailing extension map, if any.
    public let extensions: CBORValue?

    /// The longest credential id accepted (WebAuthn §5.8.3: at most 1023 bytes).
    static let maxCredentialIDLength = 1023

    /// Parses `bytes` as authenticatorData of the given `layout`.
    /// - Throws: `AppAttestError` `.authDataMalformed` when a field is short, a CBOR map is not
    ///   well-formed (strict decoder), the ED flag promises extensions that are not there, or any
    ///   byte follows the extension map.
    public init(bytes: [UInt8], layout: Layout) throws(AppAttestError) {
        self.bytes = bytes
        guard bytes.count >= 37 else { throw Self.malformed("shorter than 37 bytes") }
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        counter = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var position = 37

        let decoder = CBORDecoder(limits: .init(maxDepth: 8, maxStringLength: bytes.count, maxCollectionCount: 64))
        switch layout {
        case .assertion:
            attestedCredential = nil
        case .attestation:
            guard flags & Self.attestedCredentialDataFlag != 0 else { throw Self.malformed("AT flag not set") }
            guard bytes.count - position >= 18 else { throw Self.malformed("attested credential data truncated") }
            let aaguid = Array(bytes[position..<(position + 16)])
            let length = Int(bytes[position + 16]) << 8 | Int(bytes[position + 17])
            position += 18
            guard length <= Self.maxCredentialIDLength, length <= bytes.count - position else {
                throw Self.malformed("credentialId length exceeds the data")
            }
            let credentialID = Array(bytes[position..<(position + length)])
            position += length
            let key: CBORValue
            let consumed: Int
            do {
                (key, consumed) = try decoder.decodePrefix(bytes[position...])
            } catch {
                throw Self.malformed("credential public key is not well-formed CBOR (\(error.reason))")
            }
            guard case .map = key else { throw Self.malformed("credential public key is not a CBOR map") }
            position += consumed
            attestedCredential = AttestedCredential(aaguid: aaguid, credentialID: credentialID, credentialPublicKey: key)
        }

        if position == bytes.count {
            guard flags & Self.extensionDataFlag == 0 else { throw Self.malformed("ED flag set without extensions") }
            extensions = nil
        } else {
            let map: CBORValue
            let consumed: Int
            do {
                (map, consumed) = try decoder.decodePrefix(bytes[position...])
            } catch {
                throw Self.malformed("trailing extensions are not well-formed CBOR (\(error.reason))")
            }
            guard case .map = map else { throw Self.malformed("trailing extensions are not a CBOR map") }
            guard position + consumed == bytes.count else { throw Self.malformed("bytes follow the extension map") }
            extensions = map
        }
    }

    private static func malformed(_ detail: String) -> AppAttestError {
        AppAttestError(.authDataMalformed, "authenticatorData: \(detail)")
    }
}
