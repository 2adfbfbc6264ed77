import HTTPFields

/// A provider's key, prepared once for injection: the header field or query parameter it becomes,
/// and every form of it that must never reach a client.
///
/// Build one per provider when secrets are loaded (and again on reload), not per request.
/// `description` never shows the key.
public struct ProviderCredential: Sendable, CustomStringConvertible {
    /// The provider this credential belongs to.
    public let providerName: String
    /// The header to add (`Authorization: Bearer …`, `x-api-key: …`, `Authorization: Basic …`), or nil for query auth.
    public let header: HTTPField?
    /// `name=<percent-encoded key>` for query auth, or nil.
    let queryParameter: String?
    /// The query parameter name for query auth (compared ignoring case), or nil.
    let queryName: String?
    /// Byte strings whose presence in a response header's name or value, in any letter case, means
    /// the key is echoed: the raw key, its percent-encoded form, and the injected header value
    /// (Basic credentials are base64). Stored lowercase.
    let sensitiveForms: [[UInt8]]
    /// The length of the shortest of `sensitiveForms`, in bytes.
    let shortestSensitiveForm: Int

    /// Prepares `secretValue` for `provider`.
    /// - Throws: `SecretValueError` if the value is empty, too long, or contains control characters.
    public init(provider: Provider, secretValue: String) throws(SecretValueError) {
        try SecretValue.validate(secretValue)
        providerName = provider.name
        let encoded = PercentEncoding.encodeQueryComponent(secretValue)
        var forms: [[UInt8]] = [Array(secretValue.utf8)]
        if encoded != secretValue { forms.append(Array(encoded.utf8)) }
        // An upstream may echo the key in Basic form or plain base64 whatever the auth type
        // (a debug header, a signed URL): the base64 of the key and of `key:` are withheld too,
        // in both alphabets, without padding so that a padded echo contains them as well.
        for plain in [secretValue, secretValue + ":"] {
            let standard = Base64Encoding.standard(Array(plain.utf8)).utf8.filter { $0 != UInt8(ascii: "=") }
            forms.append(standard)
            let url = Array(Base64Encoding.url(Array(plain.utf8)).utf8)
            if url != standard { forms.append(url) }
        }
        switch provider.auth {
        case .header(let name, let format):
            header = HTTPField(name: name, value: format.render(key: secretValue))
            queryParameter = nil
            queryName = nil
        case .basic(let format):
            // RFC 7617 §2: base64 of the user-pass string, UTF-8.
            let token = Base64Encoding.standard(Array(format.render(key: secretValue).utf8))
            header = HTTPField(name: "Authorization", value: "Basic " + token)
            forms.append(token.utf8.filter { $0 != UInt8(ascii: "=") })
            queryParameter = nil
            queryName = nil
        case .query(let name):
            header = nil
            queryParameter = PercentEncoding.encodeQueryComponent(name) + "=" + encoded
            queryName = HTTPBytes.lowercased(name)
        }
        sensitiveForms = forms.map { $0.map(HTTPBytes.lower) }
        shortestSensitiveForm = forms.map(\.count).min() ?? 0
    }

    public var description: String { "ProviderCredential(\(providerName), redacted)" }
}
