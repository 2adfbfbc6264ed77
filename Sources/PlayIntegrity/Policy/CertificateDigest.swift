import KeywardCrypto

/// Parses signing-certificate SHA-256 digests written the ways people and Google write them.
///
/// Accepted forms: hex, upper or lower case, with or without colons between byte pairs
/// (`keytool -printcert`, Play Console), and base64 or base64url, padded or not (Google's
/// `certificateSha256Digest` values are base64url). Digests are compared as bytes.
///
/// Rule, applied alike to configured and token values so both sides decode the same way: text with
/// colons must be colon-separated hex pairs; otherwise text that is an even number of hex digits is hex;
/// anything else is base64. A real SHA-256 digest is never ambiguous: 64 hex digits versus 43 (unpadded,
/// odd) or 44 (ending in `=`) base64 characters.
public enum CertificateDigest {
    /// The digest bytes, or nil when the text is none of the accepted forms. Any length is returned
    /// (Google's documentation examples use short placeholders); see ``configured(_:)`` for settings.
    public static func parse(_ text: String) -> [UInt8]? {
        let trimmed = text.trimmingASCIIWhitespace
        guard !trimmed.isEmpty else { return nil }
        if trimmed.contains(":") {
            let pairs = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            guard pairs.allSatisfy({ $0.utf8.count == 2 }) else { return nil }
            return Hex.decode(pairs.joined().lowercased())
        }
        if trimmed.utf8.count % 2 == 0, trimmed.utf8.allSatisfy(\.isASCIIHexDigit) {
            return Hex.decode(trimmed.lowercased())
        }
        guard let bytes = Base64.decode(trimmed), !bytes.isEmpty else { return nil }
        return bytes
    }

    /// A configured digest: must parse and be exactly 32 bytes, so a pasted SHA-1 fingerprint
    /// (20 bytes, `keytool` prints both) fails at start-up rather than refusing every device.
    /// - Throws: ``PlayIntegrityError/misconfigured(reason:detail:)`` `certificate_digest_invalid`.
    public static func configured(_ text: String) throws(PlayIntegrityError) -> [UInt8] {
        guard let bytes = parse(text) else {
            throw .misconfigured(reason: "certificate_digest_invalid", detail: "a signing-certificate digest is neither hex nor base64")
        }
        guard bytes.count == 32 else {
            throw .misconfigured(
                reason: "certificate_digest_invalid",
                detail: "a signing-certificate digest is \(bytes.count) bytes, a SHA-256 digest is 32\(bytes.count == 20 ? " (this looks like a SHA-1 fingerprint)" : "")"
            )
        }
        return bytes
    }
}

extension UInt8 {
    var isASCIIHexDigit: Bool {
        (self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9"))
            || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}

extension String {
    var trimmingASCIIWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
