import HTTPFields

/// What the upstream receives in place of the client's headers and query.
public enum RequestRewrite {
    /// The upstream request headers, in this order:
    /// 1. the client's headers in their order, minus hop-by-hop fields (RFC 9110 §7.6.1) including
    ///    those named by `Connection`, `Authorization`, `Proxy-Authorization`, `Cookie`, `Forwarded`,
    ///    `X-Forwarded-*`, `X-Real-IP` and the other client-address fields of
    ///    `HeaderRules.clientAddressHeaders`, `X-Keyward-*`, `Host`, `Content-Length`, `Expect`, every common
    ///    key header (`x-api-key`, `api-key`, `x-goog-api-key`, `xi-api-key`), the provider's own auth
    ///    header and the names of its fixed headers — all in any letter case;
    /// 2. `Host` for the provider;
    /// 3. the provider's fixed headers;
    /// 4. the key (header and basic auth; query auth goes through `upstreamQuery`).
    ///
    /// With `uncompressedAnswer` (a metered call, whose usage is read from the relayed bytes) the
    /// client's `Accept-Encoding` is dropped and `Accept-Encoding: identity` (RFC 9110 §12.5.3)
    /// sent in its place: a gzip or br answer would hide the usage.
    ///
    /// The client's address is never added. `Content-Length` is left to the upstream client, which
    /// sends the buffered body with its exact length.
    public static func upstreamHeaders(
        client: [(name: String, value: String)], provider: Provider, credential: ProviderCredential,
        uncompressedAnswer: Bool = false
    ) -> [(name: String, value: String)] {
        let nominated = HeaderRules.connectionNominated(client)
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(client.count + provider.extraHeaders.count + 2)
        for field in client {
            // A name with `_` is dropped whatever it spells: CGI, WSGI and PHP-FPM servers read `_` as
            // `-`, so `X_Api_Key` or `Content_Length` would reach them as a field this list strips
            // (nginx drops such names by default for the same reason).
            if field.name.utf8.contains(UInt8(ascii: "_"))
                || HeaderRules.requestDroppedSet.contains(field.name)
                || provider.providerDroppedHeaders.contains(field.name)
                || nominated?.contains(field.name) == true
                || (uncompressedAnswer && HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "accept-encoding")) {
                continue
            }
            headers.append(field)
        }
        headers.append((name: "Host", value: provider.origin.hostHeader))
        for extra in provider.extraHeaders { headers.append((name: extra.name, value: extra.value)) }
        if let header = credential.header { headers.append((name: header.name, value: header.value)) }
        if uncompressedAnswer { headers.append((name: "Accept-Encoding", value: "identity")) }
        return headers
    }

    /// The upstream query string (without `?`), or nil for none.
    ///
    /// For query-key providers every client parameter whose name, percent-decoded once (RFC 3986
    /// §2.1), equals the key parameter's name ignoring case is removed — `?key=c1&KEY=c2&k%65y=c3&key=`
    /// leaves nothing of the client's key — other parameters keep their bytes and order, empty pieces
    /// (`&&`) are dropped, a literal `;` becomes `%3B`, and ours is appended percent-encoded. For
    /// other providers the raw query passes unchanged.
    public static func upstreamQuery(_ rawQuery: String?, provider: Provider, credential: ProviderCredential) -> String? {
        guard let ours = credential.queryParameter, let name = credential.queryName else {
            guard let rawQuery, !rawQuery.isEmpty else { return nil }
            return rawQuery
        }
        guard let rawQuery, !rawQuery.isEmpty else { return ours }
        let nameBytes = Array(name.utf8)
        var output = ""
        output.reserveCapacity(rawQuery.utf8.count + ours.utf8.count + 1)
        // Split on the bytes `&` and `=`, as an upstream does, not on Characters: `&` or `=` followed by
        // a combining mark (`key&\u{301}`) is one grapheme cluster and would hide a parameter boundary.
        for piece in rawQuery.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parameterName = piece.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false).first ?? piece
            let decoded = PercentEncoding.decodeLeniently(Substring(parameterName))
            if decoded.count == nameBytes.count, zip(decoded, nameBytes).allSatisfy({ HTTPBytes.lower($0) == $1 }) { continue }
            // A literal `;` goes as `%3B`: an upstream that also splits parameters on `;` (HTML 4's
            // advice, some frameworks still do) would otherwise find a client `key` after one.
            for (index, part) in piece.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false).enumerated() {
                if index > 0 { output += "%3B" }
                output += Substring(part)
            }
            output += "&"
        }
        output += ours
        return output
    }
}
