// libFuzzer target: the strict request-head parser and the chunked body decoder on arbitrary bytes.
// Properties checked besides "never traps":
// - the head parser answers the same whether the bytes come whole or in pieces (the split points
//   are taken from the input), so resuming never changes a verdict;
// - an accepted head lies inside the bytes it was given and is what the grammar allows: it ends
//   with CRLF CRLF and holds no bare LF and no line starting with whitespace; method and field
//   names are tokens, values have no control byte but HTAB and no surrounding whitespace, the
//   target is visible ASCII without `#`; it is within the head, field and line limits; its
//   framing is what its fields say (a Content-Length field holding the length; chunked only with
//   a Transfer-Encoding field and no Content-Length);
// - a head still incomplete is no larger than the head limit allows;
// - the chunked decoder yields the same data and the same end whether fed whole or in pieces, and
//   its data and consumed counts stay inside its input;
// - a ServerConnection driven over the bytes in pieces (each request answered at once) consumes
//   only what it was given, reports the parser's heads, keeps each body within its limit, and ends;
// - a response head written from fields cut out of the input is refused, or reads back under the
//   strict rules as exactly those fields (no field can split the head).
// Small limits, so that they are reached: a head of 1 KiB, 16 fields, lines of 512 bytes.
import HTTP1Codec
import HTTPFields

#if canImport(Glibc)
import Glibc
#endif

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition() {
        fputs("FuzzRequestHead.swift:\(line): property failed: \(message())\n", stderr)
        abort()
    }
}

private let limits = RequestHeadLimits(maxHeadBytes: 1024, maxFields: 16, maxLineBytes: 512)

/// Piece sizes from the input's first bytes (1 to 64), so the fuzzer explores the split points too.
private func pieces(_ bytes: [UInt8]) -> [Int] {
    let sizes = bytes.prefix(8).map { Int($0 % 64) + 1 }
    return sizes.isEmpty ? [1] : sizes
}

private func parseInPieces(_ bytes: [UInt8]) -> RequestHeadParser.Step {
    var parser = RequestHeadParser(limits: limits)
    let sizes = pieces(bytes)
    var end = 0, turn = 0
    while true {
        end = min(bytes.count, end + sizes[turn % sizes.count])
        turn += 1
        let step = bytes[..<end].withUnsafeBytes { parser.parse($0) }
        if step != .needMore || end == bytes.count { return step }
    }
}

private func checkAccepted(_ head: ParsedRequestHead, _ bytes: [UInt8]) {
    check(head.length >= 4 && head.length <= bytes.count, "length \(head.length) of \(bytes.count)")
    check(Array(bytes[(head.length - 4)..<head.length]) == Array("\r\n\r\n".utf8), "head does not end with CRLF CRLF")
    check(head.length - 2 <= limits.maxHeadBytes, "head over the limit")
    check(head.fields.count <= limits.maxFields, "too many fields")
    for index in 0..<head.length where bytes[index] == UInt8(ascii: "\n") {
        check(index > 0 && bytes[index - 1] == UInt8(ascii: "\r"), "bare LF at \(index)")
        if index + 1 < head.length {
            check(bytes[index + 1] != UInt8(ascii: " ") && bytes[index + 1] != UInt8(ascii: "\t"), "line starting with whitespace at \(index + 1)")
        }
    }
    func inside(_ span: Range<Int>) -> Bool { span.lowerBound >= 0 && span.upperBound <= head.length }
    check(inside(head.method) && !head.method.isEmpty && head.method.allSatisfy { HTTPBytes.isTokenByte(bytes[$0]) }, "method")
    check(inside(head.target) && !head.target.isEmpty
          && head.target.allSatisfy { bytes[$0] > 0x20 && bytes[$0] < 0x7F && bytes[$0] != UInt8(ascii: "#") }, "target")
    var lengths: [String] = [], transferEncodings = 0
    for field in head.fields {
        check(inside(field.name) && inside(field.value), "field outside the head")
        check(!field.name.isEmpty && field.name.allSatisfy { HTTPBytes.isTokenByte(bytes[$0]) }, "field name")
        check(bytes[field.name.upperBound] == UInt8(ascii: ":"), "no colon after the name")
        let value = Array(bytes[field.value])
        check(value.withUnsafeBytes { HTTPBytes.isFieldValue($0) }, "field value")
        if let first = value.first, let last = value.last {
            check(first != 0x20 && first != 0x09 && last != 0x20 && last != 0x09, "value not trimmed")
        }
        let name = String(decoding: bytes[field.name].map(HTTPBytes.lower), as: UTF8.self)
        if name == "content-length" { lengths.append(String(decoding: value, as: UTF8.self)) }
        if name == "transfer-encoding" { transferEncodings += 1 }
    }
    switch head.framing {
    case .none:
        check(lengths.isEmpty && transferEncodings == 0, "no framing despite its fields")
    case .contentLength(let length):
        check(transferEncodings == 0 && !lengths.isEmpty && lengths.allSatisfy { UInt64($0) == UInt64(length) && $0.allSatisfy(\.isASCII) },
              "length \(length) from \(lengths)")
    case .chunked:
        check(transferEncodings == 1 && lengths.isEmpty && head.version == .http11, "chunked framing")
    }
}

/// Decodes `input` in pieces of the given sizes: the data, and the final step with its offset in `input`.
private func decodeChunked(_ input: [UInt8], sizes: [Int]) -> (data: [UInt8], end: ChunkedBodyDecoder.Step?, at: Int) {
    var decoder = ChunkedBodyDecoder(maxLineBytes: 64, maxTrailerBytes: 256)
    var data: [UInt8] = []
    var start = 0, available = 0, turn = 0   // bytes consumed; bytes handed to the decoder so far
    while true {
        if start == available {
            if available == input.count { return (data, nil, start) }
            available = min(input.count, available + sizes[turn % sizes.count])
            turn += 1
        }
        let step = input[start..<available].withUnsafeBytes { decoder.decode($0) }
        switch step {
        case .data(let span, let consumed):
            check(!span.isEmpty && span.upperBound <= available - start && consumed == span.upperBound, "data \(span) of \(available - start)")
            data += input[(start + span.lowerBound)..<(start + span.upperBound)]
            start += consumed
        case .needMore:
            start = available
        case .end(let consumed):
            check(consumed > 0 && consumed <= available - start, "end after \(consumed)")
            check(decoder.isComplete, "ended but not complete")
            return (data, step, start + consumed)
        case .refused:
            return (data, step, start)
        }
    }
}

/// Drives a ``ServerConnection`` over `bytes` arriving in pieces, answering every request at
/// once (keep-alive): consumed counts and body offsets stay inside what was given, no request's
/// body passes its limit, the heads it reports are the parser's, and it ends (a step bound).
private func checkConnection(_ bytes: [UInt8], sizes: [Int], bodyLimit: Int) {
    var connection = ServerConnection(limits: limits)
    var buffer: [UInt8] = [], offset = 0, turn = 0, bodyBytes = 0
    for _ in 0..<(bytes.count * 4 + 64) {
        let event = buffer.withUnsafeBytes { connection.next($0, bodyLimit: { _ in bodyLimit }) }
        switch event {
        case .needMore(let consumed):
            check(consumed <= buffer.count, "needMore consumed \(consumed) of \(buffer.count)")
            buffer.removeFirst(consumed)
            guard offset < bytes.count else { return }
            let take = min(bytes.count - offset, sizes[turn % sizes.count])
            turn += 1
            buffer += bytes[offset..<(offset + take)]
            offset += take
        case .head(let head, _, let consumed):
            check(consumed == head.length && consumed <= buffer.count, "head consumed \(consumed) of \(buffer.count)")
            var parser = RequestHeadParser(limits: limits)
            let again = buffer.withUnsafeBytes { parser.parse($0) }
            check(again == .head(head), "the connection's head is not the parser's")
            buffer.removeFirst(consumed)
            bodyBytes = 0
        case .body(let span, let consumed):
            check(!span.isEmpty && span.upperBound <= consumed && consumed <= buffer.count, "body \(span) consumed \(consumed) of \(buffer.count)")
            bodyBytes += span.count
            check(bodyBytes <= bodyLimit, "body of \(bodyBytes) over the limit \(bodyLimit)")
            buffer.removeFirst(consumed)
        case .endOfRequest(let consumed):
            check(consumed <= buffer.count, "end consumed \(consumed) of \(buffer.count)")
            buffer.removeFirst(consumed)
        case .waitForAnswer:
            if !connection.answerSent(closing: false) { return }
        case .refuse(let refusal):
            check([400, 413, 431, 505].contains(refusal.status), "refusal status \(refusal.status)")
            if refusal.discardsBodyBytes > 0 {
                // The declared body is read and dropped before the close.
                check(refusal.status == 413 && connection.state == .discardingBody, "discarding after \(refusal)")
            } else {
                check(connection.state == .closed, "refused but not closed")
                return
            }
        case .closed:
            return
        }
    }
    check(false, "the connection did not end within its step bound")
}

/// Writes a response head from fields cut out of `bytes` (name and value split on `:`, fields on
/// LF, each decoded as UTF-8): either the writer refuses it, or what it wrote reads back under the
/// strict request rules (its status line swapped for a request line) as the same fields, minus the
/// framing and connection fields it replaces, plus its own: no field given can split the head.
private func checkResponseHead(_ bytes: [UInt8]) {
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(12)
    var fields: [(name: String, value: String)] = []
    for line in lines {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
        fields.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: line[(colon + 1)...], as: UTF8.self)))
    }
    let status = 200 + Int(bytes.first ?? 0) % 400
    let length: Int? = (bytes.count % 3 == 0) ? nil : bytes.count
    let request = ResponseHeadWriter.Request(
        version: bytes.count % 5 == 0 ? .http10 : .http11, isHead: bytes.count % 7 == 0, closesConnection: bytes.count % 11 == 0)
    guard case .success(let written) = ResponseHeadWriter.write(
        status: status, fields: fields, bodyLength: length, request: request, date: "Sun, 06 Nov 1994 08:49:37 GMT") else { return }
    let afterStatusLine = written.bytes.drop(while: { $0 != UInt8(ascii: "\n") }).dropFirst()
    // A request needs one Host: one is added when the fields have none (and dropped from the comparison).
    let hosts = fields.filter { HTTPBytes.equalsIgnoringCase($0.name, staticLowercased: "host") }.count
    let requestLine = hosts == 0 ? "GET / HTTP/1.1\r\nHost: x\r\n" : "GET / HTTP/1.1\r\n"
    let asRequest = Array(requestLine.utf8) + afterStatusLine
    var parser = RequestHeadParser(limits: RequestHeadLimits(maxHeadBytes: 1 << 20, maxFields: 1000))
    let parsed = asRequest.withUnsafeBytes { parser.parse($0) }
    // Two Host fields are a request-side rule, not a broken head.
    if hosts > 1, parsed == .refused(.duplicateHost) { return }
    // So is a Host value that is not a host and port.
    if hosts == 1, parsed == .refused(.invalidHost) { return }
    guard case .head(let head) = parsed else { return check(false, "written head reads as \(parsed)") }
    check(head.length == asRequest.count, "the written head has bytes after its end")
    let replaced: Set<String> = ["content-length", "transfer-encoding", "connection"]
    let expected = fields.filter { !replaced.contains(String(decoding: $0.name.utf8.map(HTTPBytes.lower), as: UTF8.self)) }
    let read = head.fields.dropFirst(hosts == 0 ? 1 : 0).prefix(expected.count)
    check(read.count == expected.count, "fields lost")
    for (field, given) in zip(read, expected) {
        check(Array(asRequest[field.name]) == Array(given.name.utf8), "a name changed")
        // The writer sends values as given; the reader trims the whitespace around them.
        var trimmed = Array(given.value.utf8)[...]
        while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
        check(Array(asRequest[field.value]) == Array(trimmed), "a value changed")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var parser = RequestHeadParser(limits: limits)
    let whole = bytes.withUnsafeBytes { parser.parse($0) }
    let again = bytes.withUnsafeBytes { parser.parse($0) }
    check(whole == again, "a finished parser changed its answer")
    let split = parseInPieces(bytes)
    check(whole == split, "whole \(whole) but in pieces \(split)")
    var body = bytes[...]
    switch whole {
    case .head(let head):
        checkAccepted(head, bytes)
        body = bytes[head.length...]
    case .needMore:
        check(bytes.count <= limits.maxHeadBytes + 2, "incomplete head of \(bytes.count) bytes")
    case .refused:
        break
    }
    // The bytes after an accepted head (or all of them) as a chunked body, whole and in pieces.
    let input = Array(body)
    let oneGo = decodeChunked(input, sizes: [max(1, input.count)])
    let inPieces = decodeChunked(input, sizes: pieces(bytes))
    check(oneGo.data == inPieces.data, "chunked data differs by split")
    switch (oneGo.end, inPieces.end) {
    case (.end?, .end?): check(oneGo.at == inPieces.at, "chunked end at \(oneGo.at) and \(inPieces.at)")
    case (.refused(let a)?, .refused(let b)?): check(a == b, "chunked refusals \(a) and \(b)")
    case (nil, nil): break
    default: check(false, "chunked outcome \(String(describing: oneGo.end)) whole, \(String(describing: inPieces.end)) in pieces")
    }
    checkConnection(bytes, sizes: pieces(bytes), bodyLimit: Int(bytes.first ?? 0) % 64)
    checkResponseHead(bytes)
    return 0
}
