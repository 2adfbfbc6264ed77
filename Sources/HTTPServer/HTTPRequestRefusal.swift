/// A request the server answered itself, before any handler ran (its head or its body refused),
/// or one the client abandoned before its body was complete (status 499, nginx's "client closed
/// request"; nothing was sent).
///
/// Passed to the server's `onRefusal` hook so the application can log the
/// reason slug (the client only ever sees the status and `{"error":"<code>"}`).
public struct HTTPRequestRefusal: Sendable, Equatable {
    /// The status sent: 400, 413, 431 or 505; 499 for an abandoned request (nothing sent).
    public let status: Int
    /// The error code in the body (`bad_request`, `payload_too_large`); `client_closed` for 499.
    public let code: String
    /// Why, as a stable slug: a head's ``HTTP1Codec/HeadRefusal`` (`missing_host`, `duplicate_host`,
    /// `content_length_with_transfer_encoding`, `conflicting_content_length`,
    /// `invalid_content_length`, `unsupported_transfer_encoding`, `transfer_encoding_on_http10`,
    /// `invalid_field_name`, `invalid_field_value`, `obsolete_line_folding`, `bare_line_feed`,
    /// `invalid_method`, `invalid_target`, `invalid_version`, `unsupported_version` (505),
    /// `head_too_large`, `too_many_fields`, `line_too_large` (431)); a chunked body's
    /// ``HTTP1Codec/ChunkedBodyRefusal`` (`chunked_body_malformed`, `chunk_line_too_large`,
    /// `trailer_malformed` (400), `chunk_size_too_large` (413), `trailer_too_large` (431));
    /// `content_length_over_limit`, `chunked_body_over_limit` (413); `body_incomplete` (499).
    public let reason: String
    /// The client's numeric IP address.
    public let remoteAddress: String
}
