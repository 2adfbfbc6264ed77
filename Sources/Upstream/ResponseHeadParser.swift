import HTTPFields

/// Assembles the final response head from the header lines libcurl hands over one by one
/// (CURLOPT_HEADERFUNCTION: every status line and header line of every response, 1xx included,
/// then the blank line ending each head, then any chunked trailers).
///
/// Rules, RFC 9112: a status line is `HTTP/<major>.<minor> <3 digits>[ <reason>]` (§4); a field line
/// is `name ":" OWS value OWS` with a token name (§5, RFC 9110 §5.6.2); a line starting with SP or
/// HTAB continues the previous value and is joined with one SP (obs-fold, §5.2); a 1xx head is
/// interim and skipped (RFC 9110 §15.2). Lines after the final head (trailers) are ignored.
/// A head over ``maxHeadBytes`` is an error, as nginx's "upstream sent too big header" (502), and
/// so are bytes no field value may hold (NUL, bare CR, other controls but HTAB: RFC 9110 §5.5).
struct ResponseHeadParser {
    /// The most bytes of one head, status line and CRLFs included: nginx's default
    /// `proxy_buffer_size` on most systems. The HTTP server keeps room for this much.
    static let maxHeadBytes = 8 * 1024

    /// What one line completed.
    enum Event: Equatable {
        case none
        case head(status: Int)
    }

    private var status: Int?
    /// The final head's fields, in arrival order, once `consume` has returned `.head`.
    private(set) var headers: [(String, String)] = []
    /// True once the final head has been returned.
    private(set) var isComplete = false
    /// Bytes of the current head so far.
    private var headBytes = 0

    /// Feeds one line (its CRLF or LF included or not).
    /// - Throws: `UpstreamError.protocolError` for a malformed status line or field line.
    mutating func consume(line raw: UnsafeRawBufferPointer) throws(UpstreamError) -> Event {
        if isComplete { return .none }
        headBytes += raw.count
        if headBytes > Self.maxHeadBytes { throw .protocolError("response head over \(Self.maxHeadBytes) bytes") }
        var line = raw[...]
        if line.last == UInt8(ascii: "\n") { line = line.dropLast() }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }

        guard let current = status else {
            status = try Self.parseStatusLine(line)
            // A typical head has 5–15 fields: one allocation instead of regrowing from one.
            if headers.capacity == 0 { headers.reserveCapacity(16) }
            return .none
        }
        if line.isEmpty {
            if (100..<200).contains(current) {
                status = nil
                headBytes = 0
                headers.removeAll(keepingCapacity: true)
                return .none
            }
            try Self.checkFraming(headers)
            isComplete = true
            return .head(status: current)
        }
        if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            guard let last = headers.popLast() else { throw .protocolError("folded line before any field") }
            let more = Self.trimmingOWS(line)
            guard more.allSatisfy(Self.isFieldValueByte) else { throw .protocolError("control byte in a field value") }
            headers.append((last.0, more.isEmpty ? last.1 : last.1 + " " + Self.text(more)))
            return .none
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw .protocolError("field line without a colon")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy({ HTTPBytes.isTokenByte($0) }) else {
            throw .protocolError("invalid field name")
        }
        let value = Self.trimmingOWS(line[(colon + 1)...])
        guard value.allSatisfy(Self.isFieldValueByte) else { throw .protocolError("control byte in a field value") }
        headers.append((Self.text(name), Self.text(value)))
        return .none
    }

    /// RFC 9112 §6.3: the `Content-Length` fields (and the list items in each) must be digits and
    /// all the same number; anything else is invalid framing, which a proxy answers with 502 rather
    /// than guess a body length (libcurl would take the last one). A head with both
    /// `Transfer-Encoding` and `Content-Length` "ought to be handled as an error" (item 3: the mark
    /// of response splitting); Keyward does, as nginx does with an upstream's.
    ///
    /// `Transfer-Encoding`, all its fields taken as one list (RFC 9110 §5.3), must be exactly the
    /// single coding `chunked` (§6.1, §7): libcurl removes the chunked framing only (content
    /// decoding is off), so any other coding (`gzip, chunked`, `chunked, chunked`, `identity`)
    /// would reach the client as bytes with no label saying how to decode them.
    private static func checkFraming(_ headers: [(String, String)]) throws(UpstreamError) {
        if headers.contains(where: { HTTPBytes.equalsIgnoringCase($0.0, staticLowercased: "transfer-encoding") }) {
            if headers.contains(where: { HTTPBytes.equalsIgnoringCase($0.0, staticLowercased: "content-length") }) {
                throw .protocolError("both Transfer-Encoding and Content-Length")
            }
            guard isOnlyChunked(headers) else { throw .protocolError("transfer coding other than chunked") }
            return
        }
        var length: UInt64?
        for (name, value) in headers {
            guard HTTPBytes.equalsIgnoringCase(name, staticLowercased: "content-length") else { continue }
            // Each comma-separated item: OWS digits OWS, all items the same number.
            var item: UInt64 = 0
            var digits = 0
            var spaceAfterDigits = false
            func closeItem() throws(UpstreamError) {
                guard digits > 0, digits <= 15, length == nil || length == item else { throw .protocolError("invalid Content-Length") }
                length = item
                item = 0
                digits = 0
                spaceAfterDigits = false
            }
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard !spaceAfterDigits else { throw .protocolError("invalid Content-Length") }
                    item = item &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
                    digits += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                    if digits > 0 { spaceAfterDigits = true }
                case UInt8(ascii: ","):
                    try closeItem()
                default:
                    throw .protocolError("invalid Content-Length")
                }
            }
            try closeItem()
        }
    }

    /// Whether the `Transfer-Encoding` fields' list items, OWS trimmed and empty items skipped
    /// (RFC 9110 §5.6.1), are exactly one `chunked`, compared case-insensitively (§7).
    private static func isOnlyChunked(_ headers: [(String, String)]) -> Bool {
        var codings = 0
        for (name, value) in headers where HTTPBytes.equalsIgnoringCase(name, staticLowercased: "transfer-encoding") {
            for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                var coding = item
                while let first = coding.first, first == " " || first == "\t" { coding.removeFirst() }
                while let last = coding.last, last == " " || last == "\t" { coding.removeLast() }
                if coding.isEmpty { continue }
                codings += 1
                guard codings == 1, HTTPBytes.equalsIgnoringCase(String(coding), staticLowercased: "chunked") else { return false }
            }
        }
        return codings == 1
    }

    /// RFC 9110 §5.5: field values are visible characters, SP, HTAB and obs-text; a bare CR, NUL
    /// or other control byte would be refused by the server sending it on (or worse, split a line).
    private static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte >= 0x20 ? byte != 0x7F : byte == 0x09
    }

    /// Parses `HTTP/x.y NNN[ reason]` (RFC 9112 §4) into its status code.
    private static func parseStatusLine(_ line: Slice<UnsafeRawBufferPointer>) throws(UpstreamError) -> Int {
        let bytes = UnsafeRawBufferPointer(rebasing: line)
        // "HTTP/1.1 200" is the shortest form; HTTP/2 status lines from libcurl read "HTTP/2 200".
        guard bytes.starts(with: "HTTP/".utf8), let space = bytes.firstIndex(of: UInt8(ascii: " ")),
              space + 4 <= bytes.count
        else { throw .protocolError("malformed status line") }
        let digits = bytes[(space + 1)..<(space + 4)]
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              space + 4 == bytes.count || bytes[space + 4] == UInt8(ascii: " ")
        else { throw .protocolError("malformed status line") }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard (100...599).contains(code) else { throw .protocolError("status code out of range") }
        return code
    }

    /// Drops leading and trailing SP and HTAB (OWS, RFC 9110 §5.6.3).
    private static func trimmingOWS(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        let isOWS: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isOWS($0) }),
              let end = bytes.lastIndex(where: { !isOWS($0) })
        else { return bytes[bytes.endIndex...] }
        return bytes[start...end]
    }

    /// Field text: UTF-8 when valid, otherwise each byte as its Latin-1 character (RFC 9110 §5.5
    /// obs-text), so no byte is silently replaced.
    private static func text(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        // Header bytes from libcurl are plain `char`s: read as UTF-8 code units in place.
        let utf8 = UnsafeRawBufferPointer(rebasing: bytes).assumingMemoryBound(to: UInt8.self)
        if utf8.allSatisfy({ $0 < 0x80 }) || String(validating: utf8, as: UTF8.self) != nil {
            return String(decoding: utf8, as: UTF8.self)
        }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
