import KeywardCrypto

/// The pieces of a JOSE compact serialization (RFC 7515 §7.1, RFC 7516 §7.1): base64url segments
/// joined by dots, the first of them a protected JSON header.
struct CompactSerialization {
    /// The segments as sent (ASCII), needed verbatim for the JWS signing input and the JWE AAD.
    let encoded: [Substring]

    /// Splits `token` into exactly `count` segments of the base64url alphabet without padding
    /// (RFC 7515 §2, "Base64url Encoding"); an empty segment is allowed only where the caller says.
    /// - Throws: `rejected` `token_malformed`.
    init(_ token: Substring, count: Int, what: String) throws(PlayIntegrityError) {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == count else {
            throw .rejected(reason: "token_malformed", detail: "\(what) does not have \(count) dot-separated segments")
        }
        guard segments.allSatisfy({ $0.utf8.allSatisfy(Self.isBase64URLCharacter) }) else {
            throw .rejected(reason: "token_malformed", detail: "\(what) has a segment outside the base64url alphabet")
        }
        encoded = segments
    }

    /// The bytes of segment `index`.
    /// - Throws: `rejected` `token_malformed` when the segment does not decode.
    func bytes(_ index: Int, what: String) throws(PlayIntegrityError) -> [UInt8] {
        guard index < encoded.count else {
            throw .rejected(reason: "token_malformed", detail: "\(what) is missing")
        }
        let segment = encoded[index]
        if segment.isEmpty { return [] }
        guard let bytes = Base64.decode(String(segment)) else {
            throw .rejected(reason: "token_malformed", detail: "\(what) is not base64url")
        }
        return bytes
    }

    /// The protected header (segment 0) as a JSON object, with its `crit` list refused: Keyward
    /// understands no header extensions, and RFC 7515 §4.1.11 / RFC 7516 §4.1.13 require refusing
    /// a token whose critical extensions are not understood.
    /// - Throws: `rejected` `token_malformed` or `<prefix>_critical_header`.
    func header(what: String, slugPrefix: String) throws(PlayIntegrityError) -> JOSEHeader {
        let object: [String: Any]
        do {
            object = try JSONObject.parse(try bytes(0, what: "\(what) header"), what: "\(what) header")
        } catch {
            throw .rejected(reason: "token_malformed", detail: "\(what) header is not a JSON object")
        }
        guard object["crit"] == nil else {
            throw .rejected(reason: "\(slugPrefix)_critical_header", detail: "\(what) header names critical extensions")
        }
        return JOSEHeader(
            algorithm: object["alg"] as? String,
            encryption: object["enc"] as? String,
            hasCompression: object["zip"] != nil
        )
    }

    private static func isBase64URLCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}

/// The header parameters Keyward judges (RFC 7515 §4.1, RFC 7516 §4.1).
struct JOSEHeader {
    /// `alg`; nil when absent or not a string.
    let algorithm: String?
    /// `enc` (JWE only).
    let encryption: String?
    /// `zip` is present (JWE compression, RFC 7516 §4.1.3): Google does not compress, Keyward does not inflate.
    let hasCompression: Bool
}
