import HTTPFields

/// Gathers header fields from libmicrohttpd's iterator and judges the
/// framing rules libmicrohttpd 0.9.75 leaves to the application.
///
/// One pass over the raw bytes: the framing fields are recognised before any
/// `String` is made, and each field becomes a `String` once.
struct HeadCollector {
    var headers: [(name: String, value: String)] = []
    /// Bytes of the header section as sent, approximately: name + ": " + value + CRLF per field.
    var headerBytes = 0
    var hostCount = 0
    var contentLengthValues: [UInt64?] = []
    var transferEncodingCount = 0
    var transferEncodingIsChunked = false
    /// A field name that is not a token, or a value with control characters.
    var malformedField: FramingError?
    /// Where each field lies in libmicrohttpd's buffer, for ``HeadLayout``.
    var spans: [HeadLayout.FieldSpan] = []
    /// Whether libmicrohttpd has queued its own error page for this request (see `lengthRefusedByLibrary`).
    var libraryQueuedAnError: Bool { lengthRefusedByLibrary && transferEncodingCount == 0 }
    /// Whether the first `Content-Length` is one that libmicrohttpd 0.9.75 itself fails to parse
    /// (anything but 1*DIGIT up to 2^64 − 1: a sign, a list, a space, an overflow). When there is no
    /// `Transfer-Encoding` it has then queued its own error page before the first access-handler
    /// call, and a response queued after it would follow that page on the wire.
    var lengthRefusedByLibrary = false

    init() {
        headers.reserveCapacity(16)
        spans.reserveCapacity(16)
    }

    mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        headerBytes += name.count + value.count + 4
        spans.append(HeadLayout.FieldSpan(name: name.baseAddress, nameCount: name.count, value: value.baseAddress, valueCount: value.count))
        if malformedField == nil {
            if !HTTPBytes.isToken(name) {
                malformedField = .invalidFieldName
            } else if !HTTPBytes.isFieldValue(value) {
                malformedField = .invalidFieldValue
            }
        }
        if HTTPBytes.caseInsensitiveEquals(name, Names.host) {
            hostCount += 1
        } else if HTTPBytes.caseInsensitiveEquals(name, Names.contentLength) {
            if contentLengthValues.isEmpty { lengthRefusedByLibrary = !Self.isPlainUInt64(value) }
            contentLengthValues.append(contentsOf: Self.parseContentLength(value))
        } else if HTTPBytes.caseInsensitiveEquals(name, Names.transferEncoding) {
            transferEncodingCount += 1
            transferEncodingIsChunked = HTTPBytes.caseInsensitiveEquals(value, Names.chunked)
        }
        headers.append((
            name: String(decoding: name, as: UTF8.self),
            value: String(decoding: value, as: UTF8.self)
        ))
    }

    /// The body framing, or why the request is refused (RFC 9112 §3.2, §6.1, §6.3).
    func framing(version: HTTPVersion) -> Result<HTTPRequestHead.BodyFraming, FramingError> {
        // RFC 9112 §5.1: whitespace before the colon must be refused (a smuggling vector:
        // `Content-Length : 5` would otherwise frame nothing and leave the body as a next request).
        if let malformedField { return .failure(malformedField) }
        // RFC 9112 §3.2: exactly one Host on HTTP/1.1, at most one otherwise.
        if version == .http11, hostCount == 0 { return .failure(.missingHost) }
        if hostCount > 1 { return .failure(.duplicateHost) }
        if transferEncodingCount > 0 {
            // RFC 9112 §6.1: TE on 1.0 means the framing is faulty.
            if version == .http10 { return .failure(.transferEncodingOnHTTP10) }
            // RFC 9112 §6.3 (3): both present is a smuggling attempt; refuse rather than pick one.
            if !contentLengthValues.isEmpty { return .failure(.contentLengthWithTransferEncoding) }
            // Only "chunked", once: anything else leaves the length unknowable (§6.3 (4)).
            if transferEncodingCount > 1 || !transferEncodingIsChunked {
                return .failure(.unsupportedTransferEncoding)
            }
            return .success(.chunked)
        }
        guard let first = contentLengthValues.first else { return .success(.none) }
        // A list of equal lengths is valid (RFC 9110 §8.6) but libmicrohttpd cannot frame it.
        if lengthRefusedByLibrary { return .failure(.invalidContentLength) }
        // RFC 9110 §8.6: a list of identical values may be accepted; differing ones never.
        guard let length = first else { return .failure(.invalidContentLength) }
        for other in contentLengthValues.dropFirst() {
            guard let other else { return .failure(.invalidContentLength) }
            if other != length { return .failure(.conflictingContentLength) }
        }
        return .success(.contentLength(Int(length)))
    }

    /// True for 1*DIGIT whose value fits in 64 bits: the only lengths libmicrohttpd 0.9.75 reads.
    static func isPlainUInt64(_ value: UnsafeRawBufferPointer) -> Bool {
        guard !value.isEmpty else { return false }
        var total: UInt64 = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
            let (times, overflowTimes) = total.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if overflowTimes || overflowSum { return false }
            total = sum
        }
        return true
    }

    /// Splits a Content-Length value on commas; each element 1–18 ASCII digits
    /// (RFC 9110 §8.6: `1*DIGIT`), nil for a malformed element. 18 digits keep it inside `Int`.
    static func parseContentLength(_ value: UnsafeRawBufferPointer) -> [UInt64?] {
        var results: [UInt64?] = []
        var current: UInt64 = 0
        var digits = 0
        var malformed = false
        var index = 0
        func finish() {
            results.append(malformed || digits == 0 || digits > 18 ? nil : current)
            current = 0
            digits = 0
            malformed = false
        }
        while index < value.count {
            let byte = value[index]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if digits < 19 { current = current &* 10 &+ UInt64(byte - UInt8(ascii: "0")) }
                digits += 1
            case UInt8(ascii: ","):
                finish()
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                // OWS around list elements only; a space inside digits is malformed.
                if digits > 0, index + 1 < value.count, value[index + 1] != UInt8(ascii: ","),
                   value[index + 1] != UInt8(ascii: " "), value[index + 1] != UInt8(ascii: "\t") {
                    malformed = true
                }
            default:
                malformed = true
            }
            index += 1
        }
        finish()
        return results
    }

    enum Names {
        nonisolated(unsafe) static let host = staticBuffer("host")
        nonisolated(unsafe) static let contentLength = staticBuffer("content-length")
        nonisolated(unsafe) static let transferEncoding = staticBuffer("transfer-encoding")
        nonisolated(unsafe) static let chunked = staticBuffer("chunked")

        private static func staticBuffer(_ text: StaticString) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        }
    }
}

/// Why a request's framing is refused; each maps to 400 `bad_request`.
enum FramingError: String, Error {
    case invalidFieldName = "invalid_field_name"
    /// A field line continued on the next line (RFC 9112 §5.2).
    case obsoleteLineFolding = "obsolete_line_folding"
    case invalidFieldValue = "invalid_field_value"
    case missingHost = "missing_host"
    case duplicateHost = "duplicate_host"
    case transferEncodingOnHTTP10 = "transfer_encoding_on_http10"
    case contentLengthWithTransferEncoding = "content_length_with_transfer_encoding"
    case unsupportedTransferEncoding = "unsupported_transfer_encoding"
    case invalidContentLength = "invalid_content_length"
    case conflictingContentLength = "conflicting_content_length"
}
