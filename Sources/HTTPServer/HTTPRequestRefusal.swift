/// A request the server answered itself, before any handler ran, one libmicrohttpd refused while
/// reading its chunked body (its own HTML page was sent), or one the client abandoned before its
/// body was complete (status 499, nginx's "client closed request"; nothing was sent).
///
/// Passed to the server's `onRefusal` hook so the application can log the
/// reason slug (the client only ever sees the status and `{"error":"<code>"}`).
public struct HTTPRequestRefusal: Sendable, Equatable {
    /// The status sent: 400, 413 or 431; 499 for an abandoned request (nothing sent).
    public let status: Int
    /// The error code in the body (`bad_request`, `payload_too_large`); `client_closed` for 499.
    public let code: String
    /// Why, as a stable slug: `missing_host`, `duplicate_host`,
    /// `content_length_with_transfer_encoding`, `conflicting_content_length`,
    /// `invalid_content_length`, `unsupported_transfer_encoding`,
    /// `transfer_encoding_on_http10`, `invalid_field_name`, `invalid_field_value`, `obsolete_line_folding`,
    /// `invalid_method`, `invalid_target`, `head_too_large`, `too_many_fields`,
    /// `content_length_over_limit`, `chunked_body_over_limit`, `cookie_too_large` (431);
    /// libmicrohttpd's: `chunked_body_malformed` (400), `chunk_size_too_large` (413),
    /// `trailer_too_large` (431); `body_incomplete` (499).
    public let reason: String
    /// The client's numeric IP address.
    public let remoteAddress: String

    static func badRequest(_ reason: String, from address: String) -> HTTPRequestRefusal {
        HTTPRequestRefusal(status: 400, code: "bad_request", reason: reason, remoteAddress: address)
    }
}
