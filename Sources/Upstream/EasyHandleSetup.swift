import CCurl
import CShims
import HTTPFields

/// Builds one easy handle for one request (https://curl.se/libcurl/c/curl_easy_setopt.html).
///
/// Runs on the caller's thread, so the multi thread only adds a ready handle. Options that matter:
/// HTTP/1.1 only (field order and case reach the upstream as given, and the per-host limit counts
/// real connections), no redirects, no proxy from the environment, http/https only, the path as is,
/// no content decoding, TLS peer and host verification left on (libcurl's default).
///
/// A handle comes reset to libcurl's defaults (`EasyHandlePool`), so every option that differs
/// from a default is set again per request; one that equals its default is not set at all
/// (CURLOPT_FOLLOWLOCATION is 0 by default: no redirect is followed). The scheme is checked here,
/// before libcurl sees the URL, and no redirect can bring another, so CURLOPT_PROTOCOLS_STR, which
/// parses its string on every request (1,470 instructions with FOLLOWLOCATION, `bench/instructions.sh`),
/// is not set either: libcurl is only ever asked for an http or https URL.
enum EasyHandleSetup {
    /// Fills `state.easy` and `state.headerList` for `request`.
    /// - Throws: `UpstreamError.invalidRequest` for a URL that is not http(s), a method that is not a
    ///   token, a HEAD with a body, a bad header; `.protocolError` if libcurl refuses an option.
    /// - Parameter urls: the client's parsed URLs; the request's is taken from there (CURLOPT_CURLU)
    ///   when libcurl can parse it, else given as text and refused by the transfer as before.
    static func configure(
        _ state: TransferState, request: UpstreamRequest, configuration: UpstreamClient.Configuration,
        urls: ParsedURLCache
    ) throws(UpstreamError) {
        guard HTTPBytes.hasPrefixIgnoringCase(request.url, "http://") || HTTPBytes.hasPrefixIgnoringCase(request.url, "https://") else {
            throw .invalidRequest("URL scheme is not http or https")
        }
        // libcurl would reject some of these itself, later and less clearly; a request target never has them.
        guard !request.url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .invalidRequest("URL contains whitespace or control characters")
        }
        // RFC 3986 §3.2.1 userinfo: libcurl would turn it into an `Authorization: Basic` field of its own.
        let afterScheme = request.url.utf8.drop { $0 != UInt8(ascii: ":") }.dropFirst(3)
        let authority = afterScheme.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard !authority.contains(UInt8(ascii: "@")) else { throw .invalidRequest("URL carries userinfo") }
        guard HTTPBytes.isToken(request.method) else { throw .invalidRequest("method is not a token") }
        let isHead = request.method == "HEAD"
        if isHead && !request.body.isEmpty { throw .invalidRequest("HEAD with a body") }
        // RFC 9110 §8.6: send Content-Length when the method defines content, even if it is empty.
        let hasContent: Bool
        switch request.method {
        case "POST", "PUT", "PATCH": hasContent = true
        default: hasContent = !request.body.isEmpty
        }
        let lines = try RequestHeaderLines.make(request.headers, hasContent: hasContent)

        guard CurlGlobal.isInitialized, let easy = EasyHandlePool.shared.take() else {
            throw .protocolError("curl_easy_init failed")
        }
        state.easy = easy
        state.headerList = lines.makeList()

        // Only http:// and https:// get here (checked above); the scheme is the one rule
        // CURLOPT_PROTOCOLS_STR would have enforced.
        if let parsed = urls.parsed(request.url) {
            state.parsedURL = parsed
            try check(kw_curl_easy_setopt_pointer(easy, CURLOPT_CURLU, UnsafeRawPointer(parsed.handle)))
        } else {
            try setString(easy, CURLOPT_URL, request.url)
        }
        try check(kw_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)))
        try check(kw_curl_easy_setopt_long(easy, CURLOPT_PATH_AS_IS, 1))
        try check(kw_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        try check(kw_curl_easy_setopt_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0))
        try check(kw_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
        // Through an HTTPS proxy, the CONNECT response's head must not reach the handler as the response.
        try check(kw_curl_easy_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
        // "" disables proxies, including http_proxy/https_proxy from the environment.
        try setString(easy, CURLOPT_PROXY, configuration.proxy ?? "")
        if let caBundlePath = configuration.caBundlePath {
            try setString(easy, CURLOPT_CAINFO, caBundlePath)
        }
        try check(kw_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, request.connectTimeoutMs)))

        if isHead {
            try check(kw_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1))
            // The connection ends with the answer (RFC 9112 §6.3: a HEAD answer has no body): a
            // provider that wrongly sends its body after the head would otherwise have those bytes
            // read as the head of the next answer on that connection.
            try check(kw_curl_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 1))
        } else if hasContent {
            // POSTFIELDSIZE first, or COPYPOSTFIELDS would strlen() the body. COPYPOSTFIELDS copies
            // the bytes into the handle and switches it to POST; the custom method keeps that framing.
            try check(kw_curl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
            let copied = request.body.withUnsafeBytes { bytes in
                "".withCString { empty in
                    kw_curl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, bytes.baseAddress ?? UnsafeRawPointer(empty))
                }
            }
            try check(copied)
            if request.method != "POST" {
                try setString(easy, CURLOPT_CUSTOMREQUEST, request.method)
            }
        } else if request.method != "GET" {
            try setString(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
        try check(kw_curl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, state.headerList))

        let context = state.opaque
        try check(kw_curl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, context))
        try check(kw_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context))
        try check(kw_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context))
        try check(kw_curl_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, context))
        try check(kw_curl_easy_set_write_function(easy) { data, size, count, userdata in
            guard let data, let userdata else { return 0 }
            let chunk = UnsafeRawBufferPointer(start: data, count: size * count)
            return TransferState.from(userdata).receiveBody(chunk)
        })
        try check(kw_curl_easy_set_header_function(easy) { data, size, count, userdata in
            guard let data, let userdata else { return 0 }
            let line = UnsafeRawBufferPointer(start: data, count: size * count)
            return TransferState.from(userdata).receiveHeaderLine(line)
        })
        try check(kw_curl_easy_set_prereq_function(easy) { userdata, primaryAddress, localAddress, primaryPort, localPort in
            guard let userdata else { return CURL_PREREQFUNC_OK }
            let state = TransferState.from(userdata)
            // CURLINFO_NUM_CONNECTS counts the connections this transfer opened: 0 = a kept one.
            var opened: Int32 = 1
            if let easy = state.easy { opened = kw_curl_easy_getinfo_connects(easy) }
            state.connectionReady(ConnectionEndpoints(
                peerAddress: primaryAddress.map { String(cString: $0) } ?? "", peerPort: Int(primaryPort),
                localAddress: localAddress.map { String(cString: $0) } ?? "", localPort: Int(localPort)),
                reused: opened == 0)
            return CURL_PREREQFUNC_OK
        })
    }

    /// Sets a string option from the string's own NUL-terminated UTF-8 (no C copy is made first:
    /// libcurl copies string options itself).
    private static func setString(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: String) throws(UpstreamError) {
        try check(value.withCString { kw_curl_easy_setopt_pointer(easy, option, $0) })
    }

    private static func check(_ code: CURLcode) throws(UpstreamError) {
        guard code == CURLE_OK else { throw .protocolError("libcurl refused an option: " + CurlErrorMapping.describe(code)) }
    }
}
