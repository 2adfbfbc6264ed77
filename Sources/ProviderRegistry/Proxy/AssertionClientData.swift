/// The clientData an iOS app signs with App Attest for one proxied request
/// (the per-request assertion): four lines joined by `\n`, no trailing newline —
///
///     METHOD
///     /p/<provider>/<path as sent, percent-encoded>[?<query as sent, when non-empty>]
///     base64url(SHA-256(body)), unpadded
///     <X-Keyward-Timestamp exactly as sent, unix seconds>
///
/// The assertion verifier hashes these bytes (clientDataHash = SHA-256(clientData)). This module
/// has no crypto: pass the body hash, or a SHA-256 function.
public enum AssertionClientData {
    /// The clientData bytes.
    /// - Parameters:
    ///   - method: the request method as received.
    ///   - path: the raw request path as received (before `?`), including `/p/<provider>`.
    ///   - query: the raw query as received (after `?`), or nil; an empty query adds no `?`.
    ///   - bodySHA256: the 32-byte SHA-256 of the request body (of the empty string for no body).
    ///   - timestamp: the `X-Keyward-Timestamp` header value exactly as sent (the caller checks it is
    ///     decimal and within ±60 s).
    public static func bytes(method: String, path: String, query: String?, bodySHA256: [UInt8], timestamp: String) -> [UInt8] {
        let bodyHash = Base64Encoding.url(bodySHA256)
        var output: [UInt8] = []
        output.reserveCapacity(method.utf8.count + path.utf8.count + (query?.utf8.count ?? 0) + bodyHash.utf8.count + timestamp.utf8.count + 5)
        output.append(contentsOf: method.utf8)
        output.append(0x0A)
        output.append(contentsOf: path.utf8)
        if let query, !query.isEmpty {
            output.append(UInt8(ascii: "?"))
            output.append(contentsOf: query.utf8)
        }
        output.append(0x0A)
        output.append(contentsOf: bodyHash.utf8)
        output.append(0x0A)
        output.append(contentsOf: timestamp.utf8)
        return output
    }

    /// The clientData bytes, hashing `body` with the given SHA-256 function (e.g. `KeywardCrypto.SHA256.hash`).
    public static func bytes(
        method: String, path: String, query: String?, body: [UInt8], timestamp: String, sha256: ([UInt8]) -> [UInt8]
    ) -> [UInt8] {
        bytes(method: method, path: path, query: query, bodySHA256: sha256(body), timestamp: timestamp)
    }
}
