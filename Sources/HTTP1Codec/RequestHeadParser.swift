import HTTPFields

/// Reads one HTTP/1.1 request head (RFC 9112 §2–§6) strictly: bytes in, a ``ParsedRequestHead``
/// of offsets or one ``HeadRefusal`` out. No I/O and no allocation per byte: the connection
/// appends what it reads to one buffer and calls ``parse(_:)`` with the whole buffer again; the
/// parser resumes at the first line it has not finished, so a head sent a byte at a time is read
/// in time linear in its length.
///
/// What is accepted, line by line:
/// - empty lines before the request line are skipped (RFC 9112 §2.2), counting toward the head limit;
/// - request line: `method SP request-target SP HTTP-version CRLF`, single spaces (§3);
/// - field line: `field-name ":" OWS field-value OWS CRLF` (§5.1), the name a token, the value free of
///   control bytes but HTAB (RFC 9110 §5.5); obs-fold refused (§5.2);
/// - every line ends with CRLF: a bare LF is refused, and a CR anywhere else is a byte the part it is
///   in does not allow;
/// - framing (§6.3): one or more `Content-Length` fields, each 1*DIGIT and all equal (RFC 9110 §8.6
///   allows identical repeats; a list inside one field is refused); `Transfer-Encoding` only as one
///   field `chunked`, never with a Content-Length, never on HTTP/1.0; exactly one `Host` on
///   HTTP/1.1 and at most one on HTTP/1.0 (§3.2).
public struct RequestHeadParser: Sendable {
    /// What one call found.
    public enum Step: Sendable, Equatable {
        /// The head is not complete; call again with more bytes (the ones given, then the new ones).
        case needMore
        /// The head is complete and accepted.
        case head(ParsedRequestHead)
        /// The head is refused; the connection answers ``HeadRefusal/status`` and closes.
        case refused(HeadRefusal)
    }

    /// The bounds this head is read with.
    public let limits: RequestHeadLimits

    /// Start of the first line not yet read.
    private var lineStart = 0
    /// Where the search for the current line's LF resumes.
    private var scanned = 0
    private var method: Range<Int>?
    private var target: Range<Int> = 0..<0
    private var version: HTTP1Version = .http11
    private var fields: [ParsedRequestHead.Field] = []
    private var hostCount = 0
    private var hostIsValid = true
    private var contentLengths: [UInt64?] = []
    private var transferEncodingCount = 0
    private var transferEncodingIsChunked = false
    private var connectionClose = false
    private var connectionKeepAlive = false
    private var expectsContinue = false
    /// Set once a step other than `.needMore` was returned; later calls repeat it.
    private var finished: Step?

    /// A parser for one head, read within `limits`.
    public init(limits: RequestHeadLimits = RequestHeadLimits()) {
        self.limits = limits
    }

    /// Reads `bytes`: every byte received on the connection since this head began, the same
    /// prefix each call. Returns the same final step again once one was returned.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> Step {
        if let finished { return finished }
        let step = advance(bytes)
        if step != .needMore { finished = step }
        return step
    }

    private mutating func advance(_ bytes: UnsafeRawBufferPointer) -> Step {
        while true {
            // A request line starts with a method, a token (RFC 9112 §3.1), or the CR of an empty
            // line: any other first byte (a TLS ClientHello's 0x16, binary) is refused as soon as
            // it arrives, not after the head timeout. It is the first byte of its line, so no limit
            // can break before it and the verdict is the same however the bytes arrive.
            if method == nil, lineStart < bytes.count, bytes[lineStart] != UInt8(ascii: "\r"),
               bytes[lineStart] != UInt8(ascii: "\n"), !HTTPBytes.isTokenByte(bytes[lineStart]) {
                return .refused(.invalidMethod)
            }
            guard let lineFeed = Self.firstLineFeed(in: bytes, from: scanned) else {
                scanned = bytes.count
                if let refusal = limitRefusal(received: bytes.count, lineFeed: nil) { return .refused(refusal) }
                return .needMore
            }
            let lineEnd = lineFeed + 1
            if let refusal = limitRefusal(received: lineEnd, lineFeed: lineFeed) { return .refused(refusal) }
            // RFC 9112 §2.2: CRLF ends a line; a bare LF is refused.
            guard lineFeed > lineStart, bytes[lineFeed - 1] == UInt8(ascii: "\r") else { return .refused(.bareLineFeed) }
            let content = lineStart..<(lineFeed - 1)
            let start = lineStart
            lineStart = lineEnd
            scanned = lineEnd

            if content.isEmpty {
                // Empty lines before the request line are skipped; after it, the blank line ends the head.
                guard method != nil else { continue }
                if start > limits.maxHeadBytes { return .refused(.headTooLarge) }
                return finish(length: lineEnd)
            }
            if method == nil {
                if let refusal = readRequestLine(bytes, content) { return .refused(refusal) }
            } else {
                if let refusal = readFieldLine(bytes, content) { return .refused(refusal) }
            }
        }
    }

    /// Whether the current line, of which the bytes up to `received` are known (to its LF at
    /// `lineFeed` when it is complete), breaks a limit. The verdict must not depend on how the bytes
    /// arrived, so each limit is placed at the byte that breaks it and the earlier one is reported:
    /// the line limit at its `maxLineBytes + 1`-th byte; the head limit at the byte after
    /// `maxHeadBytes + 2` (no blank line can end the head in time any more), or at the LF of a
    /// field line that ends past `maxHeadBytes`.
    private func limitRefusal(received: Int, lineFeed: Int?) -> HeadRefusal? {
        let lineBreaksAt = lineStart + limits.maxLineBytes
        var headBreaksAt = limits.maxHeadBytes + 2
        // A line of one byte or none before its LF may be the blank line, which may end at `maxHeadBytes + 2`.
        if let lineFeed, lineFeed - lineStart >= 2, lineFeed + 1 > limits.maxHeadBytes {
            headBreaksAt = min(headBreaksAt, lineFeed)
        }
        let lineBroken = lineBreaksAt < received, headBroken = headBreaksAt < received
        switch (headBroken, lineBroken) {
        case (true, true): return headBreaksAt <= lineBreaksAt ? .headTooLarge : .lineTooLarge
        case (true, false): return .headTooLarge
        case (false, true): return .lineTooLarge
        case (false, false): return nil
        }
    }

    /// The first LF at or after `from`.
    private static func firstLineFeed(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        var index = from
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") { return index }
            index += 1
        }
        return nil
    }

    // MARK: the request line (RFC 9112 §3)

    private mutating func readRequestLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> HeadRefusal? {
        let space = UInt8(ascii: " ")
        guard let firstSpace = (line.lowerBound..<line.upperBound).first(where: { bytes[$0] == space }) else {
            // One word: a method without a target, or not a request line at all.
            return Self.isToken(bytes, line) ? .invalidTarget : .invalidMethod
        }
        let methodSpan = line.lowerBound..<firstSpace
        guard Self.isToken(bytes, methodSpan) else { return .invalidMethod }
        let afterMethod = firstSpace + 1
        guard let secondSpace = (afterMethod..<line.upperBound).first(where: { bytes[$0] == space }) else {
            return Self.isTarget(bytes, afterMethod..<line.upperBound) ? .invalidVersion : .invalidTarget
        }
        let targetSpan = afterMethod..<secondSpace
        guard Self.isTarget(bytes, targetSpan) else { return .invalidTarget }
        // RFC 9112 §3.2.4: asterisk-form is for OPTIONS alone.
        if targetSpan.count == 1, bytes[targetSpan.lowerBound] == UInt8(ascii: "*"),
           !Self.equals(bytes, methodSpan, "OPTIONS") {
            return .invalidTarget
        }
        guard let originForm = Self.originForm(bytes, targetSpan) else { return .invalidTarget }
        switch Self.readVersion(bytes, (secondSpace + 1)..<line.upperBound) {
        case .success(let parsed): version = parsed
        case .failure(let refusal): return refusal
        }
        method = methodSpan
        target = originForm
        return nil
    }

    /// The part of a target the server routes by (RFC 9112 §3.2): an origin-form target (`/…`) or
    /// `*` itself; for an absolute-form one (`http://host/…` or `https://…`, scheme in any case),
    /// which a server must accept (§3.2.2), its path and query, the authority being ignored as the
    /// `Host` field is (Keyward routes by path alone). Nil for any other form (authority-form is
    /// CONNECT's, which Keyward does not serve; a relative path; another scheme; an absolute-form
    /// target without a path or whose authority is not a host and port, userinfo included).
    private static func originForm(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>) -> Range<Int>? {
        let first = bytes[span.lowerBound]
        if first == UInt8(ascii: "/") || (span.count == 1 && first == UInt8(ascii: "*")) { return span }
        var index = span.lowerBound
        for letter in "http".utf8 {
            guard index < span.upperBound, bytes[index] | 0x20 == letter else { return nil }
            index += 1
        }
        if index < span.upperBound, bytes[index] | 0x20 == UInt8(ascii: "s") { index += 1 }
        for mark in "://".utf8 {
            guard index < span.upperBound, bytes[index] == mark else { return nil }
            index += 1
        }
        let authorityStart = index
        while index < span.upperBound, bytes[index] != UInt8(ascii: "/") {
            guard bytes[index] != UInt8(ascii: "?") else { return nil }
            index += 1
        }
        guard index < span.upperBound, index > authorityStart, isHostValue(bytes, authorityStart..<index) else { return nil }
        return index..<span.upperBound
    }

    /// `HTTP/` DIGIT `.` DIGIT (RFC 9112 §2.3), case-sensitive.
    private static func readVersion(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>) -> Result<HTTP1Version, HeadRefusal> {
        guard span.count == 8, equals(bytes, span.lowerBound..<(span.lowerBound + 5), "HTTP/"),
              bytes[span.lowerBound + 6] == UInt8(ascii: ".") else { return .failure(.invalidVersion) }
        let major = bytes[span.lowerBound + 5], minor = bytes[span.lowerBound + 7]
        guard isDigit(major), isDigit(minor) else { return .failure(.invalidVersion) }
        guard major == UInt8(ascii: "1") else { return .failure(.unsupportedVersion) }
        return .success(minor == UInt8(ascii: "0") ? .http10 : .http11)
    }

    // MARK: field lines (RFC 9112 §5)

    private mutating func readFieldLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> HeadRefusal? {
        let first = bytes[line.lowerBound]
        // RFC 9112 §5.2: a line starting with whitespace continues the previous one (obs-fold),
        // or, before the first field, is whitespace after the request line (§2.2): both refused.
        if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { return .obsoleteLineFolding }
        var colon = line.lowerBound
        while colon < line.upperBound, HTTPBytes.isTokenByte(bytes[colon]) { colon += 1 }
        // The name ends at the first byte that is not a tchar; it must be a colon, after at least one byte.
        guard colon < line.upperBound, colon > line.lowerBound, bytes[colon] == UInt8(ascii: ":") else {
            return .invalidFieldName
        }
        var valueStart = colon + 1, valueEnd = line.upperBound
        while valueStart < valueEnd, Self.isBlank(bytes[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart, Self.isBlank(bytes[valueEnd - 1]) { valueEnd -= 1 }
        let name = line.lowerBound..<colon, value = valueStart..<valueEnd
        guard HTTPBytes.isFieldValue(UnsafeRawBufferPointer(rebasing: bytes[value])) else { return .invalidFieldValue }
        fields.append(ParsedRequestHead.Field(name: name, value: value))
        if fields.count > limits.maxFields { return .tooManyFields }
        noteFramingField(bytes, name: name, value: value)
        return nil
    }

    /// Records what the framing, keep-alive and `Expect` fields say; judged once the head is complete.
    private mutating func noteFramingField(_ bytes: UnsafeRawBufferPointer, name: Range<Int>, value: Range<Int>) {
        switch name.count {
        case 4 where Self.equalsIgnoringCase(bytes, name, "host"):
            hostCount += 1
            if !Self.isHostValue(bytes, value) { hostIsValid = false }
        case 14 where Self.equalsIgnoringCase(bytes, name, "content-length"):
            contentLengths.append(Self.readLength(bytes, value))
        case 17 where Self.equalsIgnoringCase(bytes, name, "transfer-encoding"):
            transferEncodingCount += 1
            transferEncodingIsChunked = Self.equalsIgnoringCase(bytes, value, "chunked")
        case 10 where Self.equalsIgnoringCase(bytes, name, "connection"):
            // RFC 9110 §7.6.1: a list of connection options.
            Self.forEachListElement(bytes, value) { element in
                if Self.equalsIgnoringCase(bytes, element, "close") { connectionClose = true }
                if Self.equalsIgnoringCase(bytes, element, "keep-alive") { connectionKeepAlive = true }
            }
        case 6 where Self.equalsIgnoringCase(bytes, name, "expect"):
            if Self.equalsIgnoringCase(bytes, value, "100-continue") { expectsContinue = true }
        default:
            break
        }
    }

    /// 1 to 18 ASCII digits (so the value fits an `Int`); nil for anything else.
    private static func readLength(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>) -> UInt64? {
        guard !span.isEmpty, span.count <= 18 else { return nil }
        var total: UInt64 = 0
        for index in span {
            guard isDigit(bytes[index]) else { return nil }
            total = total * 10 + UInt64(bytes[index] - UInt8(ascii: "0"))
        }
        return total
    }

    // MARK: the end of the head (RFC 9112 §3.2, §6.3)

    private func finish(length: Int) -> Step {
        guard let method else { return .refused(.invalidMethod) }
        if version == .http11, hostCount == 0 { return .refused(.missingHost) }
        if hostCount > 1 { return .refused(.duplicateHost) }
        if !hostIsValid { return .refused(.invalidHost) }
        let framing: RequestBodyFraming
        if transferEncodingCount > 0 {
            // §6.1: Transfer-Encoding on 1.0 means the framing is faulty.
            if version == .http10 { return .refused(.transferEncodingOnHTTP10) }
            // §6.3 (3): both present is a smuggling attempt; refuse rather than pick one.
            if !contentLengths.isEmpty { return .refused(.contentLengthWithTransferEncoding) }
            guard transferEncodingCount == 1, transferEncodingIsChunked else { return .refused(.unsupportedTransferEncoding) }
            framing = .chunked
        } else if let first = contentLengths.first {
            guard let length = first else { return .refused(.invalidContentLength) }
            for other in contentLengths.dropFirst() {
                guard let other else { return .refused(.invalidContentLength) }
                if other != length { return .refused(.conflictingContentLength) }
            }
            framing = .contentLength(Int(length))
        } else {
            framing = .none
        }
        let closes = version == .http10 ? !connectionKeepAlive || connectionClose : connectionClose
        return .head(ParsedRequestHead(
            method: method, target: target, version: version, fields: fields, framing: framing,
            length: length, closesConnection: closes, expectsContinue: expectsContinue))
    }

    // MARK: bytes

    /// Whether `span` is `uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 3986 §3.2.2–3.2.3): an
    /// IP-literal in brackets, or a reg-name / IPv4 of unreserved, sub-delims and `%` bytes (empty
    /// allowed), then an optional colon and a port: digits (none allowed, RFC 3986 §3.2.3) whose
    /// value is a TCP port, at most 65535 (leading zeros do not count against it).
    private static func isHostValue(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>) -> Bool {
        var index = span.lowerBound
        if index < span.upperBound, bytes[index] == UInt8(ascii: "[") {
            index += 1
            while index < span.upperBound, bytes[index] != UInt8(ascii: "]") {
                guard isHostByte(bytes[index]) || bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
            }
            guard index < span.upperBound else { return false }
            index += 1
        } else {
            while index < span.upperBound, isHostByte(bytes[index]) { index += 1 }
        }
        guard index < span.upperBound else { return true }
        guard bytes[index] == UInt8(ascii: ":") else { return false }
        index += 1
        var port = 0
        while index < span.upperBound {
            guard isDigit(bytes[index]) else { return false }
            port = port * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
            guard port <= 65535 else { return false }
            index += 1
        }
        return true
    }

    /// unreserved, sub-delims or `%` (RFC 3986 §2.1–2.3): the bytes of a reg-name or IPv4 address.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="): true
        default: false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func isToken(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>) -> Bool {
        !span.isEmpty && span.allSatisfy { HTTPBytes.isTokenByte(bytes[$0]) }
    }

    /// A request-target: visible ASCII (RFC 3986 via RFC 9112 §3.2: a URI is ASCII; other bytes are
    /// sent percent-encoded) but `#`, non-empty.
    private static func isTarget(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>) -> Bool {
        !span.isEmpty && span.allSatisfy { bytes[$0] > 0x20 && bytes[$0] < 0x7F && bytes[$0] != UInt8(ascii: "#") }
    }

    private static func equals(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>, _ text: StaticString) -> Bool {
        guard span.count == text.utf8CodeUnitCount else { return false }
        return text.withUTF8Buffer { expected in
            for offset in 0..<span.count where bytes[span.lowerBound + offset] != expected[offset] { return false }
            return true
        }
    }

    /// `text` must be lowercase.
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>, _ text: StaticString) -> Bool {
        guard span.count == text.utf8CodeUnitCount else { return false }
        return text.withUTF8Buffer { expected in
            for offset in 0..<span.count where HTTPBytes.lower(bytes[span.lowerBound + offset]) != expected[offset] { return false }
            return true
        }
    }

    /// Calls `body` with each element of a comma-separated list, trimmed of OWS, empty ones skipped (RFC 9110 §5.6.1).
    private static func forEachListElement(_ bytes: UnsafeRawBufferPointer, _ span: Range<Int>, _ body: (Range<Int>) -> Void) {
        var start = span.lowerBound
        while start <= span.upperBound {
            var end = start
            while end < span.upperBound, bytes[end] != UInt8(ascii: ",") { end += 1 }
            var low = start, high = end
            while low < high, isBlank(bytes[low]) { low += 1 }
            while high > low, isBlank(bytes[high - 1]) { high -= 1 }
            if low < high { body(low..<high) }
            start = end + 1
        }
    }
}
