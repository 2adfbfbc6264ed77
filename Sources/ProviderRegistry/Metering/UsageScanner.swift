#if canImport(Glibc)
import Glibc
#endif

/// Reads the token usage a provider reports from the bytes of its answer as they are relayed,
/// chunk by chunk, without keeping the body and without changing a byte: a JSON lexer that keeps
/// only its nesting (which key opened each object, at most ``maximumDepth`` deep), the string it
/// is in (at most ``maximumKeyBytes`` of it) and the number it is reading.
///
/// It looks for integer members of a usage object (`usage`, or Gemini's `usageMetadata`) that is
/// a member of a top-level object, or of an object in a top-level array (Gemini's streamed JSON
/// array), or one level deeper in the one wrapper each format documents: Anthropic's
/// `message_start` carries its first figures in `message.usage` (they count only toward the
/// input), OpenAI's Responses API its closing ones in `response.usage` (`response.completed`).
/// A usage object anywhere else (inside a tool call's arguments the model wrote, say) is never
/// read. Each figure found replaces the one
/// before (providers report running totals), so the last one stands. Text inside a string, such
/// as generated content that spells `"usage"`, is never read as a key.
///
/// With `serverSentEvents` (a `text/event-stream` answer) each line is read on its own: a `data:`
/// line holds one JSON value (RFC 8259 strings cannot hold a raw line feed), other lines are
/// skipped by the same rules, and the lexer starts afresh after every line feed.
public struct UsageScanner: Sendable {
    /// The figures found so far.
    public struct Usage: Sendable, Equatable {
        /// Input tokens, cache reads and writes included; nil until one is reported.
        public var input: Int?
        /// Output tokens (Gemini: thoughts included); nil until the answer's closing figure is seen.
        public var output: Int?

        public init(input: Int? = nil, output: Int? = nil) {
            self.input = input
            self.output = output
        }
    }

    public static let maximumDepth = 32
    /// Longer strings are never one of the keys looked for.
    public static let maximumKeyBytes = PackedKey.capacity

    private enum Frame: Sendable {
        /// `usage`: opened by the usage key; `wrapper`: opened by the format's wrapper key.
        case object(usage: Bool, wrapper: Bool)
        case array
    }

    private let format: MeterRule.Format
    private let serverSentEvents: Bool
    private var frames: [Frame] = []
    /// Containers open beyond `maximumDepth`, counted only.
    private var overflow = 0
    private var inString = false
    private var escaped = false
    /// Server-sent events: nothing of the current line was read yet (the state is fresh).
    private var atLineStart = true
    /// The string being read, packed; marked too long once it cannot be a key looked for.
    private var string = PackedKey()
    /// The last string read, awaiting its `:`.
    private var lastString: PackedKey?
    /// The key whose value comes next.
    private var key: PackedKey?
    private var number: Int?
    private var negative = false
    /// The number being read has a fraction or an exponent (`1200.0`, `3e2`): not a token count,
    /// so it is dropped whole, never read as the digits after its `.` or `e`.
    private var notInteger = false
    /// Figures by the member they came from, for the sums each format needs.
    private var input: Int?
    private var cacheCreation: Int?
    private var cacheRead: Int?
    private var output: Int?
    private var thoughts: Int?

    /// - Parameters:
    ///   - format: the provider's wire format.
    ///   - serverSentEvents: the answer is `text/event-stream`.
    public init(format: MeterRule.Format, serverSentEvents: Bool) {
        self.format = format
        self.serverSentEvents = serverSentEvents
        frames.reserveCapacity(8)
    }

    /// The usage found so far: the input once any input figure was seen; the output once the
    /// format's closing figure was (Gemini omits a zero `candidatesTokenCount`, so there the output
    /// stands once `promptTokenCount` was seen).
    public var usage: Usage {
        var result = Usage()
        if let input { result.input = input + (cacheCreation ?? 0) + (cacheRead ?? 0) }
        switch format {
        case .openAI, .anthropic: result.output = output
        case .gemini: if input != nil { result.output = (output ?? 0) + (thoughts ?? 0) }
        }
        return result
    }

    /// Reads the next bytes of the answer.
    public mutating func scan(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        let count = bytes.count
        // A line feed ends a string only in server-sent events; elsewhere the quote stands in.
        let lineFeed: UInt8 = serverSentEvents ? 0x0A : UInt8(ascii: "\"")
        while index < count {
            if atLineStart && serverSentEvents, let skipped = skipLine(bytes, from: index) {
                index = skipped
                continue
            }
            atLineStart = false
            if inString && !escaped {
                // The body of a string, most of an answer's bytes: run to the next quote,
                // backslash or line feed, then pack what a key can hold.
                let start = index
                while index < count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == lineFeed { break }
                    index += 1
                }
                string.append(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
                if index == count { return }
            }
            step(bytes[index])
            index += 1
        }
    }

    /// Where the next line starts when the line at `start` is whole in `bytes` and cannot hold a
    /// usage object (it does not contain `usage`, which `usageMetadata` contains too): the lexer
    /// starts afresh after every line feed, so such a line cannot change a figure. Nil when the
    /// line must be read (it has `usage`, or it goes on past these bytes).
    private func skipLine(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let rest = bytes.count - start
        guard let lineFeed = memchr(base + start, 0x0A, rest) else { return nil }
        let end = base.distance(to: UnsafeRawPointer(lineFeed))
        // Each `u` of the line (memchr) checked for the `sage` after it.
        var from = start
        while from + 5 <= end, let found = memchr(base + from, Int32(UInt8(ascii: "u")), end - from) {
            let at = base.distance(to: UnsafeRawPointer(found))
            if at + 5 <= end, bytes[at + 1] == UInt8(ascii: "s"), bytes[at + 2] == UInt8(ascii: "a"),
               bytes[at + 3] == UInt8(ascii: "g"), bytes[at + 4] == UInt8(ascii: "e") { return nil }
            from = at + 1
        }
        return end + 1
    }

    /// Reads the next bytes of the answer.
    public mutating func scan(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { scan($0) }
    }

    private mutating func step(_ byte: UInt8) {
        if inString {
            // A line feed ends an event's line even after a backslash: RFC 8259 strings hold no
            // raw line feed, and each line is read on its own (a whole line without `usage` is
            // skipped unread, so reading on past it would make the figures depend on the split).
            if byte == 0x0A && serverSentEvents {
                resetLine()
            } else if escaped {
                escaped = false
                string.markTooLong()   // no key looked for has an escape
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                lastString = string.isTooLong ? nil : string
            } else {
                string.append(byte)
            }
            return
        }
        switch byte {
        case UInt8(ascii: "\""):
            endNumber()
            inString = true
            string = PackedKey()
        case UInt8(ascii: ":"):
            endNumber()
            key = lastString
            lastString = nil
        case UInt8(ascii: "{"):
            endNumber()
            push(.object(usage: key == usageKey, wrapper: wrapperKey != nil && key == wrapperKey))
        case UInt8(ascii: "["):
            endNumber()
            push(.array)
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            endNumber()
            if overflow > 0 { overflow -= 1 } else if !frames.isEmpty { frames.removeLast() }
            key = nil
        case UInt8(ascii: ","):
            endNumber()
            key = nil
            lastString = nil
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            if key != nil {
                let digit = Int(byte - UInt8(ascii: "0"))
                let value = (number ?? 0)
                number = value > 100_000_000_000_000 ? value : value * 10 + digit
            }
        case UInt8(ascii: "-"):
            if key != nil { negative = true }
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"):
            if number != nil { notInteger = true } else { endNumber() }
        case 0x0A:
            if serverSentEvents { resetLine() } else { endNumber() }
        default:
            endNumber()
        }
    }

    private mutating func push(_ frame: Frame) {
        key = nil
        lastString = nil
        if frames.count < Self.maximumDepth && overflow == 0 { frames.append(frame) } else { overflow += 1 }
    }

    private mutating func resetLine() {
        endNumber()
        atLineStart = true
        frames.removeAll(keepingCapacity: true)
        overflow = 0
        inString = false
        escaped = false
        lastString = nil
        key = nil
    }

    private var usageKey: PackedKey { format == .gemini ? UsageKeys.usageMetadata : UsageKeys.usage }

    /// The member that wraps a usage object one level down: Anthropic's `message`, OpenAI's
    /// `response`; Gemini has none.
    private var wrapperKey: PackedKey? {
        switch format {
        case .openAI: UsageKeys.response
        case .anthropic: UsageKeys.message
        case .gemini: nil
        }
    }

    /// Where the open usage object sits: nil when the innermost object is no usage object or sits
    /// anywhere but the places read; true when it is a member of a top-level object (or of an
    /// object in a top-level array); false when it is in the format's wrapper object.
    private var usagePlacement: Bool? {
        guard overflow == 0, case .object(usage: true, _)? = frames.last else { return nil }
        let depth = frames.count
        if depth == 2, case .object = frames[0] { return true }
        if depth == 3, case .array = frames[0], case .object = frames[1] { return true }
        if depth == 3, case .object = frames[0], case .object(_, wrapper: true) = frames[1] { return false }
        return nil
    }

    private mutating func endNumber() {
        guard let value = number else {
            negative = false
            notInteger = false
            return
        }
        number = nil
        defer {
            negative = false
            notInteger = false
        }
        guard !negative, !notInteger, let name = key, let topLevel = usagePlacement else { return }
        switch format {
        case .openAI:
            if name == UsageKeys.promptTokens || name == UsageKeys.inputTokens { input = value }
            if name == UsageKeys.completionTokens || name == UsageKeys.outputTokens { output = value }
        case .anthropic:
            if name == UsageKeys.inputTokens { input = value }
            if name == UsageKeys.cacheCreationInputTokens { cacheCreation = value }
            if name == UsageKeys.cacheReadInputTokens { cacheRead = value }
            // message_start's output figure is a placeholder; the closing one is top-level.
            if topLevel, name == UsageKeys.outputTokens { output = value }
        case .gemini:
            guard topLevel else { return }
            if name == UsageKeys.promptTokenCount { input = value }
            if name == UsageKeys.candidatesTokenCount { output = value }
            if name == UsageKeys.thoughtsTokenCount { thoughts = value }
        }
    }
}

/// A string of at most 32 bytes packed into four words, so keys compare without an allocation;
/// a longer one is only marked too long.
struct PackedKey: Sendable, Equatable {
    static let capacity = 32
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The bytes appended; past `capacity` the key is too long.
    private var length = 0

    init() {}

    init(_ text: StaticString) {
        text.withUTF8Buffer { for byte in $0 { append(byte) } }
    }

    var isTooLong: Bool { length > Self.capacity }

    mutating func markTooLong() { length = Self.capacity + 1 }

    /// Appends a run of bytes; a run that cannot fit marks the key too long without copying it.
    mutating func append(_ run: UnsafeRawBufferPointer) {
        guard !run.isEmpty else { return }
        guard length + run.count <= Self.capacity else {
            length = Self.capacity + 1
            return
        }
        // The words are zero past `length`, and little-endian packing is byte order in memory.
        let at = length
        withUnsafeMutableBytes(of: &words) { storage in
            storage.baseAddress!.advanced(by: at).copyMemory(from: run.baseAddress!, byteCount: run.count)
        }
        length += run.count
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        guard length < Self.capacity else {
            length = Self.capacity + 1
            return
        }
        let shifted = UInt64(byte) << UInt64((length & 7) * 8)
        switch length >> 3 {
        case 0: words.0 |= shifted
        case 1: words.1 |= shifted
        case 2: words.2 |= shifted
        default: words.3 |= shifted
        }
        length += 1
    }

    static func == (left: PackedKey, right: PackedKey) -> Bool {
        left.length == right.length && left.words.0 == right.words.0 && left.words.1 == right.words.1
            && left.words.2 == right.words.2 && left.words.3 == right.words.3
    }
}

/// The member names the scanners look for.
enum UsageKeys {
    static let usage = PackedKey("usage")
    static let usageMetadata = PackedKey("usageMetadata")
    static let message = PackedKey("message")
    static let response = PackedKey("response")
    static let promptTokens = PackedKey("prompt_tokens")
    static let completionTokens = PackedKey("completion_tokens")
    static let inputTokens = PackedKey("input_tokens")
    static let outputTokens = PackedKey("output_tokens")
    static let cacheCreationInputTokens = PackedKey("cache_creation_input_tokens")
    static let cacheReadInputTokens = PackedKey("cache_read_input_tokens")
    static let promptTokenCount = PackedKey("promptTokenCount")
    static let candidatesTokenCount = PackedKey("candidatesTokenCount")
    static let thoughtsTokenCount = PackedKey("thoughtsTokenCount")
}
