import HTTPFields

/// Turns a request's header fields into libcurl's CURLOPT_HTTPHEADER lines.
///
/// libcurl sends custom lines in the order given, and replaces its own field when a line names it.
/// A line `Name:` (nothing after the colon) removes libcurl's own field without sending one, and
/// `Name;` sends the field with an empty value (https://curl.se/libcurl/c/CURLOPT_HTTPHEADER.html).
/// The lines suppress the defaults libcurl 7.88 would otherwise add: `Accept: */*` on every request,
/// `Expect: 100-continue` on large bodies, and `Content-Type: application/x-www-form-urlencoded`
/// on requests with a body. `Host` (required by RFC 9112 §3.2) and `Content-Length` are left to
/// libcurl when the request does not carry them.
enum RequestHeaderLines {
    /// - Parameters:
    ///   - headers: the request's fields, in order.
    ///   - hasContent: whether the request is sent with content framing (a body, or POST/PUT/PATCH).
    /// - Returns: lines for `curl_slist_append`, without CRLF.
    /// - Throws: `UpstreamError.invalidRequest` for a name that is not a token or a value with CR, LF or NUL.
    static func make(_ headers: [(String, String)], hasContent: Bool) throws(UpstreamError) -> [String] {
        var lines: [String] = []
        lines.reserveCapacity(headers.count + 3)
        var hasAccept = false, hasExpect = false, hasContentType = false
        for (name, value) in headers {
            guard HTTPBytes.isToken(name) else { throw .invalidRequest("header name is not a token") }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw .invalidRequest("header value contains CR, LF or NUL")
            }
            switch name.lowercased() {
            case "content-length", "transfer-encoding": continue  // framing is set from the body
            case "accept": hasAccept = true
            case "expect": hasExpect = true
            case "content-type": hasContentType = true
            default: break
            }
            lines.append(value.isEmpty ? name + ";" : name + ": " + value)
        }
        if !hasAccept { lines.append("Accept:") }
        if !hasExpect { lines.append("Expect:") }
        if hasContent && !hasContentType { lines.append("Content-Type:") }
        return lines
    }
}
