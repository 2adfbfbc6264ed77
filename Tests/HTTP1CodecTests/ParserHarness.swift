import HTTP1Codec

/// A head parsed from text, with its parts as strings, for assertions.
struct ParsedText: Equatable {
    var method: String
    var target: String
    var version: HTTP1Version
    var fields: [[String]]
    var framing: RequestBodyFraming
    var length: Int
    var closes: Bool
    var expectsContinue: Bool
}

enum Outcome: Equatable {
    case needMore
    case head(ParsedText)
    case refused(HeadRefusal)

    var refusal: HeadRefusal? {
        if case .refused(let refusal) = self { return refusal }
        return nil
    }

    var head: ParsedText? {
        if case .head(let head) = self { return head }
        return nil
    }
}

/// Parses `bytes` given whole, in one call.
func parse(_ bytes: [UInt8], limits: RequestHeadLimits = RequestHeadLimits()) -> Outcome {
    var parser = RequestHeadParser(limits: limits)
    return bytes.withUnsafeBytes { outcome(parser.parse($0), in: $0) }
}

/// Parses `text` (its UTF-8 bytes) given whole.
func parse(_ text: String, limits: RequestHeadLimits = RequestHeadLimits()) -> Outcome {
    parse(Array(text.utf8), limits: limits)
}

/// Parses `bytes` as a connection would see them arrive: the buffer grows by `step` bytes per call.
func parseArriving(_ bytes: [UInt8], step: Int, limits: RequestHeadLimits = RequestHeadLimits()) -> Outcome {
    var parser = RequestHeadParser(limits: limits)
    var end = 0
    while true {
        end = min(bytes.count, end + max(1, step))
        let result = bytes[..<end].withUnsafeBytes { buffer in outcome(parser.parse(buffer), in: buffer) }
        if result != .needMore || end == bytes.count { return result }
    }
}

func outcome(_ step: RequestHeadParser.Step, in buffer: UnsafeRawBufferPointer) -> Outcome {
    func text(_ span: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: buffer[span]), as: UTF8.self)
    }
    switch step {
    case .needMore: return .needMore
    case .refused(let refusal): return .refused(refusal)
    case .head(let head):
        return .head(ParsedText(
            method: text(head.method), target: text(head.target), version: head.version,
            fields: head.fields.map { [text($0.name), text($0.value)] }, framing: head.framing,
            length: head.length, closes: head.closesConnection, expectsContinue: head.expectsContinue))
    }
}
