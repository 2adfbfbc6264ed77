import HTTPFields

/// Writes the head of a response (RFC 9112 §4, §6) and decides how its body is delimited and
/// whether the connection stays open after it. No I/O: bytes out, for the connection to send.
///
/// The rules a server must apply whatever the handler asked (RFC 9110 §6.4.1, §8.6, §9.3.2,
/// §15.3.5, §15.4.5; RFC 9112 §6.1, §6.3, §9.3):
/// - the status is 200–599: informational answers are the server's own (`100 Continue`);
/// - field names are tokens and values hold no control byte but HTAB: no response splitting;
/// - `Content-Length` and `Transfer-Encoding` given by the handler are dropped and the writer
///   frames the body itself: `Content-Length` when the length is known, chunked when it is not
///   (HTTP/1.1), the end of the connection when it is not (HTTP/1.0);
/// - 204 and 304 have no body and 204 no `Content-Length`; a HEAD answer has no body, with the
///   length a GET would have had when known;
/// - `Date` is added when absent, from the time the caller gives (the clock is a parameter);
/// - `Connection: close` is written whenever the connection ends after this answer, and
///   `Connection: keep-alive` to an HTTP/1.0 client that asked to keep it.
public struct ResponseHeadWriter: Sendable {
    /// What the request said about the answer it may get.
    public struct Request: Sendable, Equatable {
        /// The request's version: an HTTP/1.0 client gets no chunked body.
        public var version: HTTP1Version
        /// The method was HEAD: no body goes out.
        public var isHead: Bool
        /// The connection ends after this exchange (the request said so, or the server is draining).
        public var closesConnection: Bool

        /// - Parameters: see the properties.
        public init(version: HTTP1Version, isHead: Bool, closesConnection: Bool) {
            self.version = version
            self.isHead = isHead
            self.closesConnection = closesConnection
        }
    }

    /// How the body that follows the head is delimited.
    public enum BodyFraming: Sendable, Equatable {
        /// Nothing follows: HEAD, 204, 304.
        case none
        /// Exactly this many bytes follow.
        case contentLength(Int)
        /// Chunks follow (``ChunkFraming``), then the last chunk.
        case chunked
        /// Bytes follow until the connection closes (HTTP/1.0, length unknown).
        case untilClose
    }

    /// A head ready to send.
    public struct Written: Sendable, Equatable {
        /// Status line, fields and the blank line.
        public let bytes: [UInt8]
        /// How the body that follows must be sent.
        public let framing: BodyFraming
        /// The connection must close once the body is sent.
        public let closesConnection: Bool
    }

    /// Why a head cannot be written; the server answers 500 instead.
    public enum Refusal: String, Error, Sendable, Equatable {
        /// A status outside 200–599.
        case invalidStatus = "invalid_status"
        /// A field name that is not a token.
        case invalidFieldName = "invalid_field_name"
        /// A value with a control byte other than HTAB (CR and LF would split the head).
        case invalidFieldValue = "invalid_field_value"
    }

    /// Writes the head.
    /// - Parameters:
    ///   - status: 200–599.
    ///   - fields: the handler's fields, in order.
    ///   - bodyLength: bytes of the body when known; nil for a stream of unknown length.
    ///   - request: what the request allows.
    ///   - date: the `Date` value (an IMF-fixdate, ``HTTPDate/imfFixdate(secondsSince1970:)``) added when `fields` has none.
    /// - Returns: the head, or why it cannot be written.
    public static func write(
        status: Int, fields: [(name: String, value: String)], bodyLength: Int?, request: Request, date: String
    ) -> Result<Written, Refusal> {
        guard (200...599).contains(status) else { return .failure(.invalidStatus) }
        var out: [UInt8] = []
        out.reserveCapacity(128 + fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
        // Appended piece by piece: string interpolation builds and frees a String per line.
        out += "HTTP/1.1 ".utf8
        appendDecimal(status, to: &out)
        out.append(UInt8(ascii: " "))
        out += reasonPhrase(status).utf8
        out += "\r\n".utf8
        var hasDate = false, closes = request.closesConnection
        for field in fields {
            guard HTTPBytes.isToken(field.name) else { return .failure(.invalidFieldName) }
            var value = field.value
            guard value.withUTF8({ HTTPBytes.isFieldValue(UnsafeRawBufferPointer($0)) }) else { return .failure(.invalidFieldValue) }
            if HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "content-length")
                || HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "transfer-encoding") {
                continue
            }
            if HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "date") { hasDate = true }
            if HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "connection") {
                // The writer states the connection's fate itself, once.
                if HTTPBytes.containsIgnoringCase(field.value, Self.close) { closes = true }
                continue
            }
            out += field.name.utf8
            out += ": ".utf8
            out += field.value.utf8
            out += "\r\n".utf8
        }
        if !hasDate {
            out += "Date: ".utf8
            out += date.utf8
            out += "\r\n".utf8
        }
        let framing: BodyFraming
        if status == 204 || status == 304 {
            framing = .none
        } else if let bodyLength {
            out += "Content-Length: ".utf8
            appendDecimal(bodyLength, to: &out)
            out += "\r\n".utf8
            framing = request.isHead ? .none : .contentLength(bodyLength)
        } else if request.isHead {
            framing = .none
        } else if request.version == .http11 {
            out += "Transfer-Encoding: chunked\r\n".utf8
            framing = .chunked
        } else {
            framing = .untilClose
            closes = true
        }
        if closes {
            out += "Connection: close\r\n".utf8
        } else if request.version == .http10 {
            out += "Connection: keep-alive\r\n".utf8
        }
        out += "\r\n".utf8
        return .success(Written(bytes: out, framing: framing, closesConnection: closes))
    }

    private static let close = Array("close".utf8)

    /// Appends `value` in decimal digits, as `String(value)` spells it.
    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var rest = value.magnitude, count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            out.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// The reason phrase of RFC 9110 §15 for the statuses Keyward sends; other codes get an
    /// empty one, which RFC 9112 §4 allows (clients ignore it).
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 499: "Client Closed Request"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }
}

/// The framing of one chunk of a chunked body (RFC 9112 §7.1): a hex size line before the data,
/// CRLF after it, and the last chunk with an empty trailer section. Sent around the data (with
/// `writev`), so the data itself is not copied.
public enum ChunkFraming {
    /// `<size in hex>` CRLF; `count` must be above 0 (a chunk of 0 bytes is the last chunk).
    public static func prefix(count: Int) -> [UInt8] {
        Array(String(count, radix: 16).utf8) + [0x0D, 0x0A]
    }

    /// The CRLF that ends a chunk's data.
    public static let suffix: [UInt8] = [0x0D, 0x0A]

    /// The last chunk and the end of the (empty) trailer section: `0` CRLF CRLF.
    public static let last: [UInt8] = Array("0\r\n\r\n".utf8)
}

/// HTTP dates (RFC 9110 §5.6.7).
public enum HTTPDate {
    /// The IMF-fixdate of a Unix time, e.g. `Sun, 06 Nov 1994 08:49:37 GMT` for 784111777.
    /// Seconds before 1970 are read as 1970.
    public static func imfFixdate(secondsSince1970: Int64) -> String {
        let seconds = max(0, secondsSince1970)
        let days = seconds / 86_400, secondOfDay = seconds % 86_400
        // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar).
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        // 1970-01-01 was a Thursday.
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(days % 7)]), \(two(day)) \(months[Int(month - 1)]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }
}
