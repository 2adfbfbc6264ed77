/// Why a request head is refused. Each refusal ends the connection: once the head cannot be read,
/// where the next request would start is in doubt (RFC 9112 §2.2, §5, §6).
///
/// `rawValue` is the stable reason slug the logs and metrics count; the client sees only
/// ``status`` and the JSON error code (`bad_request` for every one of these).
public enum HeadRefusal: String, Error, Sendable, Equatable, CaseIterable {
    // The request line (RFC 9112 §3).
    /// The method is empty or not a token (RFC 9110 §9.1).
    case invalidMethod = "invalid_method"
    /// The target is empty, holds a control byte, a space, a byte over 0x7E or `#` (RFC 9112 §3.2; a fragment is
    /// never sent, RFC 9110 §4.2.4), or is `*` with a method other than `OPTIONS` (§3.2.4).
    case invalidTarget = "invalid_target"
    /// The version is not `HTTP/` DIGIT `.` DIGIT, or the line is not three parts split by single spaces.
    case invalidVersion = "invalid_version"
    /// A major version other than 1 (RFC 9110 §15.6.6: 505).
    case unsupportedVersion = "unsupported_version"

    // Lines (RFC 9112 §2.2).
    /// A line ended by LF alone. RFC 9112 §2.2 lets a recipient accept it; Keyward does not, so
    /// that no line ending is read one way here and another way elsewhere.
    case bareLineFeed = "bare_line_feed"

    // Field lines (RFC 9112 §5, RFC 9110 §5).
    /// A name that is empty or not a token, whitespace before the colon, no colon, a NUL.
    case invalidFieldName = "invalid_field_name"
    /// A value holding a control byte other than HTAB (CR, NUL, DEL included; RFC 9110 §5.5).
    case invalidFieldValue = "invalid_field_value"
    /// A line starting with a space or HTAB: obs-fold, or whitespace before the first field (RFC 9112 §5.2, §2.2).
    case obsoleteLineFolding = "obsolete_line_folding"

    // Framing (RFC 9112 §3.2, §6).
    /// HTTP/1.1 without `Host` (RFC 9112 §3.2).
    case missingHost = "missing_host"
    /// More than one `Host` field (RFC 9112 §3.2), even with the same value.
    case duplicateHost = "duplicate_host"
    /// A `Host` value that is not `uri-host [ ":" port ]` (RFC 9112 §3.2: answered 400), such as
    /// one with a space, a slash or `@`.
    case invalidHost = "invalid_host"
    /// Transfer-Encoding on an HTTP/1.0 request (RFC 9112 §6.1: the framing is faulty).
    case transferEncodingOnHTTP10 = "transfer_encoding_on_http10"
    /// Both Content-Length and Transfer-Encoding (RFC 9112 §6.3 (3)): refused rather than one picked.
    case contentLengthWithTransferEncoding = "content_length_with_transfer_encoding"
    /// Any Transfer-Encoding but one field whose value is `chunked` alone: Keyward decodes no other coding.
    case unsupportedTransferEncoding = "unsupported_transfer_encoding"
    /// A Content-Length value that is not 1 to 18 ASCII digits (a list, a sign, a space, hex, overflow).
    case invalidContentLength = "invalid_content_length"
    /// Two Content-Length fields with different values (RFC 9110 §8.6).
    case conflictingContentLength = "conflicting_content_length"

    // Limits (RFC 6585 §5: 431).
    /// The head (request line and field lines, without the blank line) is over ``RequestHeadLimits/maxHeadBytes``.
    case headTooLarge = "head_too_large"
    /// More field lines than ``RequestHeadLimits/maxFields``.
    case tooManyFields = "too_many_fields"
    /// One line over ``RequestHeadLimits/maxLineBytes``.
    case lineTooLarge = "line_too_large"

    /// The status to answer with: 431 for a limit, 505 for another major version, 400 otherwise.
    public var status: Int {
        switch self {
        case .headTooLarge, .tooManyFields, .lineTooLarge: 431
        case .unsupportedVersion: 505
        default: 400
        }
    }
}
