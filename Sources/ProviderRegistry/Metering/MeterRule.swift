/// Credits charged by the usage the provider reports: an allow rule's `meter` and
/// `credits_per_1k_tokens = { input = 1, output = 4 }`.
///
/// Before the call its worst case is held (``holdCredits(bodyBytes:outputCap:)``); once the answer
/// has arrived whole with its usage, the call is charged ``credits(input:output:)`` and the rest of
/// the hold is given back.
public struct MeterRule: Sendable, Equatable {
    /// Where the provider reports usage: the wire format of its answers.
    public enum Format: String, Sendable, CaseIterable {
        /// `usage.prompt_tokens` / `usage.completion_tokens` (chat completions; `input_tokens` /
        /// `output_tokens` for responses), in the JSON answer or the last SSE chunk.
        case openAI = "openai"
        /// `usage.input_tokens` (with `cache_creation_input_tokens`, `cache_read_input_tokens`) and
        /// `usage.output_tokens`: in the JSON answer, or `message_start` then `message_delta` events.
        case anthropic
        /// `usageMetadata.promptTokenCount`, `candidatesTokenCount` and `thoughtsTokenCount`.
        case gemini
    }

    public let format: Format
    /// Credits per 1,000 input tokens (0-1,000,000).
    public let inputPer1k: Int
    /// Credits per 1,000 output tokens (0-1,000,000).
    public let outputPer1k: Int

    public init(format: Format, inputPer1k: Int, outputPer1k: Int) {
        self.format = format
        self.inputPer1k = inputPer1k
        self.outputPer1k = outputPer1k
    }

    /// The credits of `input` and `output` tokens: ⌈(input × inputPer1k + output × outputPer1k) / 1000⌉,
    /// one rounding up for the whole call (1,200 in and 300 out at 1 and 4: ⌈2.4⌉ = 3).
    public func credits(input: Int, output: Int) -> Int {
        let thousandths = Self.clamped(input) * inputPer1k + Self.clamped(output) * outputPer1k
        return (thousandths + 999) / 1000
    }

    /// The worst case of a call, held before it goes upstream: its input estimated at one token per
    /// body byte (a text token is at least one byte) and its output at the rule's cap
    /// (`max_tokens` × `n`), through ``credits(input:output:)``; at least 1.
    public func holdCredits(bodyBytes: Int, outputCap: Int) -> Int {
        max(1, credits(input: bodyBytes, output: outputCap))
    }

    /// Token counts beyond any a provider reports (10^12) are taken as that bound, so a figure
    /// never overflows.
    static func clamped(_ tokens: Int) -> Int { min(max(tokens, 0), 1_000_000_000_000) }
}
