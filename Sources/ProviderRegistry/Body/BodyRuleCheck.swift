import KeywardSupport

/// Why a body did not pass its allow rule's `json` table. The client gets one code for each kind;
/// `reason` (which rule) goes to the log only.
public struct BodyRuleRefusal: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Not one strict JSON object (RFC 8259; a member named twice, too deep, a byte-order
        /// mark): 400 `bad_request`.
        case malformed
        /// A rule of the table is broken: 403 `body_rule_refused`.
        case refused
    }

    public let kind: Kind
    /// `json_malformed`, `json_not_object`, `json_ambiguous`, `json_too_deep` (malformed), or the
    /// broken rule: `body_rule_models`, `body_rule_max_tokens`, `body_rule_stream`, `body_rule_n`,
    /// `body_rule_stream_usage` (a metered stream whose `stream_options.include_usage` is not
    /// true), `body_rule_assertion_bound` (a member had to be added to a body the device signed).
    public let reason: String

    init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }
}


extension BodyRule {
    /// The members the check reads, as `folded` spells them. A member that folds to one of these
    /// without being spelled as the check reads it (`Max_Tokens`, `ſtream` with U+017F) is refused
    /// as ambiguous: an upstream whose JSON decoder matches names without regard to case (Go's
    /// `encoding/json` folds ASCII case, `ſ` to `s` and the Kelvin sign to `k`) would read it as
    /// the member the check let through or added.
    static let checkedNamesFolded: Set<String> = [
        "model", "stream", "stream_options", "n", "max_tokens", "max_completion_tokens", "max_output_tokens",
        "generationconfig", "generation_config",
    ]
    /// The same for the members read inside `generationConfig`.
    static let generationConfigNamesFolded: Set<String> = ["maxoutputtokens", "max_output_tokens", "candidatecount", "candidate_count"]

    /// `name` with ASCII letters lowercased and the two non-ASCII letters that Unicode simple case
    /// folding takes to ASCII ones (U+017F ſ → `s`, U+212A Kelvin sign → `k`) replaced.
    static func folded(_ name: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0x41...0x5A: out.append(Unicode.Scalar(scalar.value + 0x20)!)
            case 0x17F: out.append("s")
            case 0x212A: out.append("k")
            default: out.append(scalar)
            }
        }
        return String(out)
    }
    /// The body to forward once `body` passed this rule: nil when it goes unchanged, else `body`
    /// with the output cap added (`"max_tokens":1024` as the object's last member, or inside
    /// `generationConfig`), every other byte as it was.
    ///
    /// Rules, in order: `body` is one object by `StrictJSON`'s rules (numbers in full, depth at
    /// most ``maximumDepth``); `model` is a string among `models`; each output member present
    /// (``TokenMember``) is an integer in 0...`maxTokens`; `stream`, when present, is a boolean
    /// that keeps `stream`; `n` and `generationConfig.candidateCount` (either spelling of
    /// Google's, `generation_config.candidate_count` too), when present, are integers
    /// in 1...`maxChoices`. A body that names no output member while the rule has a cap gets
    /// `capMember`. With `addStreamUsage` (a metered OpenAI call), a body with `"stream": true`
    /// gets `"stream_options":{"include_usage":true}` (or `include_usage` inside its
    /// `stream_options`), so the last chunk reports the usage; one that sets it to anything but
    /// true is refused. Nothing is added where `mayRewrite` is false (the body is covered by the
    /// device's signature): such a body is refused instead.
    /// - Throws: ``BodyRuleRefusal``.
    public func check(_ body: [UInt8], mayRewrite: Bool, addStreamUsage: Bool = false) throws(BodyRuleRefusal) -> [UInt8]? {
        let members: [StrictJSON.Member]
        do {
            members = try StrictJSON.object(body, options: StrictJSON.Options(maximumDepth: Self.maximumDepth, integersOnly: false))
        } catch {
            switch error {
            case .notAnObject: throw BodyRuleRefusal(.malformed, "json_not_object")
            case .malformed: throw BodyRuleRefusal(.malformed, "json_malformed")
            case .duplicateMember: throw BodyRuleRefusal(.malformed, "json_ambiguous")
            case .tooDeep: throw BodyRuleRefusal(.malformed, "json_too_deep")
            }
        }
        var model: StrictJSON.Member?
        var stream: StrictJSON.Member?
        var streamOptions: StrictJSON.Member?
        var choices: [StrictJSON.Member] = []
        var caps: [StrictJSON.Member] = []
        var generationConfig: StrictJSON.Member?
        for member in members {
            switch member.name {
            case "model": model = member
            case "stream": stream = member
            case "stream_options": streamOptions = member
            case "n": choices.append(member)
            case "max_tokens", "max_completion_tokens", "max_output_tokens": caps.append(member)
            // Google's APIs read protobuf JSON, which takes each field by its lowerCamelCase JSON name
            // or its proto name (`generation_config`, `max_output_tokens`, `candidate_count`):
            // both spellings are checked, and a body naming the object both ways is ambiguous.
            case "generationConfig", "generation_config":
                guard generationConfig == nil else { throw BodyRuleRefusal(.malformed, "json_ambiguous") }
                generationConfig = member
                for inner in member.members ?? [] {
                    if inner.name == "maxOutputTokens" || inner.name == "max_output_tokens" { caps.append(inner) }
                    else if inner.name == "candidateCount" || inner.name == "candidate_count" { choices.append(inner) }
                    else if Self.generationConfigNamesFolded.contains(Self.folded(inner.name)) { throw BodyRuleRefusal(.malformed, "json_ambiguous") }
                }
            default:
                if Self.checkedNamesFolded.contains(Self.folded(member.name)) { throw BodyRuleRefusal(.malformed, "json_ambiguous") }
            }
        }
        if let models {
            guard let name = model?.string, models.contains(name) else { throw BodyRuleRefusal(.refused, "body_rule_models") }
        }
        if let stream, stream.kind != .bool { throw BodyRuleRefusal(.refused, "body_rule_stream") }
        let streams = stream?.bool == true
        switch self.stream {
        case .any: break
        case .required: if !streams { throw BodyRuleRefusal(.refused, "body_rule_stream") }
        case .forbidden: if streams { throw BodyRuleRefusal(.refused, "body_rule_stream") }
        }
        for choice in choices {
            guard let count = choice.integer, count >= 1, count <= maxChoices else { throw BodyRuleRefusal(.refused, "body_rule_n") }
        }
        if let maxTokens {
            for cap in caps {
                guard let asked = cap.integer, asked >= 0, asked <= maxTokens else { throw BodyRuleRefusal(.refused, "body_rule_max_tokens") }
            }
        }
        // What must be added: the cap when no output member is there, the usage request of a
        // metered stream when the body does not ask it already.
        var topLevel = ""
        var inserts: [(at: Int, text: String)] = []
        if let maxTokens, caps.isEmpty {
            if capMember == .generationConfigMaxOutputTokens, let generationConfig {
                guard generationConfig.kind == .object else { throw BodyRuleRefusal(.refused, "body_rule_max_tokens") }
                inserts.append(Self.insertion("\"maxOutputTokens\":\(maxTokens)", objectRange: generationConfig.valueRange,
                                              lastMember: generationConfig.members?.last))
            } else if capMember == .generationConfigMaxOutputTokens {
                topLevel += "\"generationConfig\":{\"maxOutputTokens\":" + String(maxTokens) + "}"
            } else {
                topLevel += "\"" + capMember.rawValue + "\":" + String(maxTokens)
            }
        }
        if addStreamUsage, streams {
            if let streamOptions {
                guard streamOptions.kind == .object else { throw BodyRuleRefusal(.refused, "body_rule_stream_usage") }
                if let include = streamOptions.members?.first(where: { $0.name == "include_usage" }) {
                    guard include.bool == true else { throw BodyRuleRefusal(.refused, "body_rule_stream_usage") }
                } else {
                    inserts.append(Self.insertion("\"include_usage\":true", objectRange: streamOptions.valueRange,
                                                  lastMember: streamOptions.members?.last))
                }
            } else {
                topLevel += (topLevel.isEmpty ? "" : ",") + "\"stream_options\":{\"include_usage\":true}"
            }
        }
        if !topLevel.isEmpty {
            inserts.append(Self.insertion(topLevel, objectRange: Self.topLevelRange(body), lastMember: members.last))
        }
        guard !inserts.isEmpty else { return nil }
        guard mayRewrite else { throw BodyRuleRefusal(.refused, "body_rule_assertion_bound") }
        return Self.applying(inserts, to: body)
    }

    /// The range of the top-level object in `body` (leading and trailing whitespace left out).
    static func topLevelRange(_ body: [UInt8]) -> Range<Int> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var start = 0
        var end = body.count
        while start < end, isSpace(body[start]) { start += 1 }
        while end > start, isSpace(body[end - 1]) { end -= 1 }
        return start..<end
    }

    /// Where `member` (`"name":value`) goes to be the last member of the object at `objectRange`:
    /// right after its last member's value (after a comma), or right after its `{` when empty.
    static func insertion(_ member: String, objectRange: Range<Int>, lastMember: StrictJSON.Member?) -> (at: Int, text: String) {
        guard let lastMember else { return (objectRange.lowerBound + 1, member) }
        return (lastMember.valueRange.upperBound, "," + member)
    }

    /// `body` with each text inserted at its offset, every other byte as it was.
    static func applying(_ inserts: [(at: Int, text: String)], to body: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(body.count + inserts.reduce(0) { $0 + $1.text.utf8.count })
        var copied = 0
        for insert in inserts.count < 2 ? inserts : inserts.sorted(by: { $0.at < $1.at }) {
            result.append(contentsOf: body[copied..<insert.at])
            result.append(contentsOf: insert.text.utf8)
            copied = insert.at
        }
        result.append(contentsOf: body[copied...])
        return result
    }
}
