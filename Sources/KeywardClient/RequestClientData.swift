import Foundation

/// The clientData an app signs with its App Attest key for one proxied request to a provider with
/// `require_assertion = true`: four lines joined by `\n`, no trailing newline —
///
///     METHOD
///     /p/<provider>/<path as sent, percent-encoded>[?<query as sent, when non-empty>]
///     base64url(SHA-256(body)), unpadded
///     <X-Keyward-Timestamp exactly as sent, unix seconds>
///
/// The server builds the same bytes from what it received and checks the assertion over
/// clientDataHash = SHA-256(clientData). Both sides are tested against the worked examples in
/// `Tests/Fixtures/client-data-vectors.json`; the rule is written out in README.md, "Integrate your app".
public enum RequestClientData {
    /// The clientData bytes.
    /// - Parameters:
    ///   - method: the request method as sent (`POST`).
    ///   - path: the percent-encoded request path as sent, `/p/<provider>/…`.
    ///   - query: the percent-encoded query as sent (after `?`), or nil; an empty query adds no `?`.
    ///   - body: the request body (empty for none).
    ///   - timestamp: the `X-Keyward-Timestamp` value exactly as sent (decimal unix seconds).
    public static func bytes(method: String, path: String, query: String?, body: Data, timestamp: String) -> Data {
        var text = method + "\n" + path
        if let query, !query.isEmpty { text += "?" + query }
        text += "\n" + SHA256Digest.hash(body).base64URLUnpadded + "\n" + timestamp
        return Data(text.utf8)
    }

    /// clientDataHash = SHA-256(clientData), 32 bytes: what `generateAssertion` signs.
    public static func hash(method: String, path: String, query: String?, body: Data, timestamp: String) -> Data {
        SHA256Digest.hash(bytes(method: method, path: path, query: query, body: body, timestamp: timestamp))
    }
}

/// The handshake hashes and the Android binding, as Keyward checks them.
public enum HandshakeEncoding {
    /// clientDataHash for `attestKey` and the handshake's `generateAssertion`: SHA-256 of the 32
    /// challenge bytes, decoded from the base64url text `/v1/challenge` returned (not of the text).
    /// - Returns: nil when `challenge` is not base64.
    public static func clientDataHash(challenge: String) -> Data? {
        guard let bytes = Data(base64Any: challenge) else { return nil }
        return SHA256Digest.hash(bytes)
    }

    /// The Play Integrity `requestHash` (standard) or `nonce` (classic):
    /// base64url(SHA-256(challenge bytes ‖ UTF-8 install_id)), unpadded, 43 characters.
    /// - Returns: nil when `challenge` is not base64.
    public static func androidRequestHash(challenge: String, installID: String) -> String? {
        guard let bytes = Data(base64Any: challenge) else { return nil }
        return SHA256Digest.hash(bytes + Data(installID.utf8)).base64URLUnpadded
    }
}
