import CCurl

/// Maps a libcurl result code to Keyward's upstream errors (https://curl.se/libcurl/c/libcurl-errors.html).
enum CurlErrorMapping {
    /// - Parameters:
    ///   - code: the transfer's CURLcode (not CURLE_OK).
    ///   - connected: whether a connection was ready before the failure; with no overall timeout
    ///     set, CURLE_OPERATION_TIMEDOUT before that is the connect timeout.
    static func error(for code: CURLcode, connected: Bool) -> UpstreamError {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT,
             CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE:
            return .connect
        case CURLE_OPERATION_TIMEDOUT:
            return connected ? .timeout : .connect
        case CURLE_URL_MALFORMAT:
            return .invalidRequest(describe(code))
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Before a connection: a URL libcurl will not speak. After: a response it cannot parse
            // (libcurl reports a garbled status line this way).
            return connected ? .protocolError(describe(code)) : .invalidRequest(describe(code))
        default:
            return .protocolError(describe(code))
        }
    }

    /// libcurl's fixed text for a code: generic, so it never carries a URL or data.
    static func describe(_ code: CURLcode) -> String {
        guard let text = curl_easy_strerror(code) else { return "curl error \(code.rawValue)" }
        return String(cString: text)
    }
}
