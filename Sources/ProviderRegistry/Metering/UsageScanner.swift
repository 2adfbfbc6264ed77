/// Reads the token usage a provider reports from the bytes of its answer as they are relayed,
/// chunk by chunk, without keeping the body and without changing a byte: a JSON lexer that keeps
/// only its nesting (which key opened each object, at most ``maximumDepth`` deep), the string it
/// is in (at most ``maximumKeyBytes`` of it) and the number it is reading.
///
/// It looks for integer members of a usage object (`usage`, or Gemini's `usageMetadata`) that is
/// a member of a top-level object, or of an object in a top-level array (Gemini's streamed JSON
/// array): Anthropic's `message_start` carries its first figures one level deeper
/// (`message.usage`), so those count only toward the input. Each figure found replaces the one
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
    public static let maximumKeyBytes = 40

    private enum Frame: Sendable {
        case object(UsageKey)
        case array
    }

    /// What the key that opened an object means here.
    private enum UsageKey: Sendable, Equatable {
        case other, usage
    }

    private let format: MeterRule.Format
    private let serverSentEvents: Bool
    private var frames: [Frame] = []
    /// Containers open beyond `maximumDepth`, counted only.
    private var overflow = 0
    private var inString = false
    private var escaped = false
    private var string: [UInt8] = []
    private var stringTooLong = false
    /// The last string read outside a value position, awaiting its `:`.
    private var lastString: [UInt8]?
    /// The key whose value comes next.
    private var key: [UInt8]?
    private var number: Int?
    private var negative = false
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
        string.reserveCapacity(Self.maximumKeyBytes)
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
        for byte in bytes { step(byte) }
    }

    /// Reads the next bytes of the answer.
    public mutating func scan(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { scan($0) }
    }

    @inline(__always)
    private mutating func step(_ byte: UInt8) {
        if inString {
            if escaped {
                escaped = false
                stringTooLong = true   // no key looked for has an escape
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                lastString = stringTooLong ? nil : string
            } else if byte == 0x0A && serverSentEvents {
                resetLine()
            } else if string.count < Self.maximumKeyBytes {
                string.append(byte)
            } else {
                stringTooLong = true
            }
            return
        }
        switch byte {
        case UInt8(ascii: "\""):
            endNumber()
            inString = true
            string.removeAll(keepingCapacity: true)
            stringTooLong = false
        case UInt8(ascii: ":"):
            endNumber()
            key = lastString
            lastString = nil
        case UInt8(ascii: "{"):
            endNumber()
            push(.object(isUsageKey(key) ? .usage : .other))
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
        frames.removeAll(keepingCapacity: true)
        overflow = 0
        inString = false
        escaped = false
        lastString = nil
        key = nil
    }

    private func isUsageKey(_ name: [UInt8]?) -> Bool {
        guard let name else { return false }
        switch format {
        case .openAI, .anthropic: return name.elementsEqual("usage".utf8)
        case .gemini: return name.elementsEqual("usageMetadata".utf8)
        }
    }

    /// Where the open usage object sits: nil when the innermost object is no usage object; true
    /// when it is a member of a top-level object (or of an object in a top-level array).
    private var usagePlacement: Bool? {
        guard overflow == 0, case .object(.usage)? = frames.last else { return nil }
        let depth = frames.count
        if depth == 2, case .object = frames[0] { return true }
        if depth == 3, case .array = frames[0], case .object = frames[1] { return true }
        return false
    }

    private mutating func endNumber() {
        guard let value = number else {
            negative = false
            return
        }
        number = nil
        defer { negative = false }
        guard !negative, let name = key, let topLevel = usagePlacement else { return }
        switch format {
        case .openAI:
            guard topLevel else { return }
            if name.elementsEqual("prompt_tokens".utf8) || name.elementsEqual("input_tokens".utf8) { input = value }
            if name.elementsEqual("completion_tokens".utf8) || name.elementsEqual("output_tokens".utf8) { output = value }
        case .anthropic:
            if name.elementsEqual("input_tokens".utf8) { input = value }
            if name.elementsEqual("cache_creation_input_tokens".utf8) { cacheCreation = value }
            if name.elementsEqual("cache_read_input_tokens".utf8) { cacheRead = value }
            // message_start's output figure is a placeholder; the closing one is top-level.
            if topLevel, name.elementsEqual("output_tokens".utf8) { output = value }
        case .gemini:
            guard topLevel else { return }
            if name.elementsEqual("promptTokenCount".utf8) { input = value }
            if name.elementsEqual("candidatesTokenCount".utf8) { output = value }
            if name.elementsEqual("thoughtsTokenCount".utf8) { thoughts = value }
        }
    }
}
