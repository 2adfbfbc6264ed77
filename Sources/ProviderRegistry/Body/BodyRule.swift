/// What an AI call may ask in its JSON body: an allow rule's `json` table
/// (`json = { models = ["gpt-4o-mini"], max_tokens = 1024, stream = "any" }`).
///
/// Checked after the body is read and before anything goes upstream (``check(_:mayRewrite:)``);
/// the only change it ever makes is to add the output cap when the body names none.
public struct BodyRule: Sendable, Equatable {
    /// `stream`: whether the body's `stream` member must be `true`, must not be, or either.
    public enum Stream: String, Sendable, CaseIterable {
        case any, required, forbidden
    }

    /// The members that carry the largest output a call asks for, one per provider API; the rule
    /// reads all four and adds ``BodyRule/capMember`` when none is there.
    public enum TokenMember: String, Sendable, CaseIterable {
        /// OpenAI chat completions (older models), Anthropic messages (where it is required).
        case maxTokens = "max_tokens"
        /// OpenAI chat completions (every current model; the o-series accept only this one).
        case maxCompletionTokens = "max_completion_tokens"
        /// OpenAI responses.
        case maxOutputTokens = "max_output_tokens"
        /// Gemini `generateContent`: `maxOutputTokens` inside the `generationConfig` object.
        case generationConfigMaxOutputTokens = "generationConfig.maxOutputTokens"
    }

    /// The `model` member must be one of these, compared exactly; nil: any model (Gemini names its
    /// model in the path, which the allow rule's glob already bounds).
    public let models: [String]?
    /// The largest output a call may ask for, tokens (1-10,000,000); nil: no cap.
    public let maxTokens: Int?
    /// The member added with `maxTokens` when the body names no output cap (`max_tokens_member`,
    /// default `max_tokens`).
    public let capMember: TokenMember
    /// `stream`, default `any`.
    public let stream: Stream
    /// The most choices a call may ask for: OpenAI's `n`, Gemini's
    /// `generationConfig.candidateCount` (`n`, 1-128, default 1).
    public let maxChoices: Int

    /// - Parameters: see the properties.
    public init(models: [String]? = nil, maxTokens: Int? = nil, capMember: TokenMember = .maxTokens, stream: Stream = .any, maxChoices: Int = 1) {
        self.models = models
        self.maxTokens = maxTokens
        self.capMember = capMember
        self.stream = stream
        self.maxChoices = maxChoices
    }

    /// The nesting a checked body may have (the top-level object is depth 1): deep enough for a
    /// tool's JSON Schema, shallow enough that the recursive reader's stack stays small. Bodies are
    /// bounded in size by the provider's `max_body_bytes`, refused before they are read.
    public static let maximumDepth = 64
}
