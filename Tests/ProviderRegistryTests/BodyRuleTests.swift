import XCTest
@testable import ProviderRegistry
import TOMLDecoding

/// The allow rule's `json` table: what it refuses, what it adds, and how providers.toml states it.
final class BodyRuleTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func refusal(_ rule: BodyRule, _ body: String, mayRewrite: Bool = true, file: StaticString = #filePath, line: UInt = #line) -> BodyRuleRefusal? {
        do {
            _ = try rule.check(bytes(body), mayRewrite: mayRewrite)
            XCTFail("expected a refusal of \(body)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    private func forwarded(_ rule: BodyRule, _ body: String, mayRewrite: Bool = true) throws -> String {
        let result = try rule.check(bytes(body), mayRewrite: mayRewrite)
        return String(decoding: result ?? bytes(body), as: UTF8.self)
    }

    let openAI = BodyRule(models: ["gpt-4o-mini", "gpt-4.1-mini"], maxTokens: 1024, capMember: .maxCompletionTokens, stream: .any)

    func testAModelNotListedIsRefusedByName() {
        XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o","messages":[]}"#), BodyRuleRefusal(.refused, "body_rule_models"))
        XCTAssertEqual(refusal(openAI, #"{"messages":[]}"#), BodyRuleRefusal(.refused, "body_rule_models"))
        XCTAssertEqual(refusal(openAI, #"{"model":["gpt-4o-mini"]}"#), BodyRuleRefusal(.refused, "body_rule_models"))
        // Exact strings: no case folding, no prefix.
        XCTAssertEqual(refusal(openAI, #"{"model":"GPT-4o-mini"}"#), BodyRuleRefusal(.refused, "body_rule_models"))
        XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o-mini-2024"}"#), BodyRuleRefusal(.refused, "body_rule_models"))
        // An escaped form of a listed name is that name.
        XCTAssertEqual(try forwarded(openAI, #"{"model":"gpt\u002d4o-mini","max_tokens":5}"#), #"{"model":"gpt\u002d4o-mini","max_tokens":5}"#)
    }

    func testEveryOutputMemberIsBoundedByTheCap() throws {
        for member in ["max_tokens", "max_completion_tokens", "max_output_tokens"] {
            XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o-mini","\#(member)":1025}"#), BodyRuleRefusal(.refused, "body_rule_max_tokens"))
            XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o-mini","\#(member)":1e3}"#), BodyRuleRefusal(.refused, "body_rule_max_tokens"))
            XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o-mini","\#(member)":null}"#), BodyRuleRefusal(.refused, "body_rule_max_tokens"))
            XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o-mini","\#(member)":-1}"#), BodyRuleRefusal(.refused, "body_rule_max_tokens"))
            let body = #"{"model":"gpt-4o-mini","\#(member)":1024}"#
            XCTAssertEqual(try forwarded(openAI, body), body, "a body within the cap goes unchanged")
        }
        // One member within the cap does not excuse another above it.
        XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o-mini","max_tokens":10,"max_completion_tokens":99999}"#),
                       BodyRuleRefusal(.refused, "body_rule_max_tokens"))
        let gemini = BodyRule(maxTokens: 512, capMember: .generationConfigMaxOutputTokens)
        XCTAssertEqual(refusal(gemini, #"{"contents":[],"generationConfig":{"maxOutputTokens":513}}"#), BodyRuleRefusal(.refused, "body_rule_max_tokens"))
        XCTAssertEqual(refusal(gemini, #"{"generationConfig":"x"}"#), BodyRuleRefusal(.refused, "body_rule_max_tokens"))
    }

    func testTheCapIsAddedAsTheLastMemberAndNothingElseChanges() throws {
        XCTAssertEqual(try forwarded(openAI, "{\"model\":\"gpt-4o-mini\",\"temperature\":0.7 ,\n\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]\n}\n"),
                       "{\"model\":\"gpt-4o-mini\",\"temperature\":0.7 ,\n\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_completion_tokens\":1024\n}\n")
        let anthropic = BodyRule(models: ["claude-3-5-haiku-latest"], maxTokens: 800)
        XCTAssertEqual(try forwarded(anthropic, #"{"model":"claude-3-5-haiku-latest","messages":[]}"#),
                       #"{"model":"claude-3-5-haiku-latest","messages":[],"max_tokens":800}"#)
        XCTAssertEqual(try forwarded(BodyRule(maxTokens: 7), "{ }"), #"{"max_tokens":7 }"#)
        let gemini = BodyRule(maxTokens: 512, capMember: .generationConfigMaxOutputTokens)
        XCTAssertEqual(try forwarded(gemini, #"{"contents":[]}"#), #"{"contents":[],"generationConfig":{"maxOutputTokens":512}}"#)
        XCTAssertEqual(try forwarded(gemini, #"{"generationConfig":{"temperature":1},"contents":[]}"#),
                       #"{"generationConfig":{"temperature":1,"maxOutputTokens":512},"contents":[]}"#)
        XCTAssertEqual(try forwarded(gemini, #"{"generationConfig":{ },"contents":[]}"#),
                       #"{"generationConfig":{"maxOutputTokens":512 },"contents":[]}"#)
        // Without a cap nothing is ever added.
        XCTAssertNil(try BodyRule(models: ["m"]).check(bytes(#"{"model":"m"}"#), mayRewrite: true))
    }

    func testASignedBodyIsNeverRewritten() throws {
        XCTAssertEqual(refusal(openAI, #"{"model":"gpt-4o-mini"}"#, mayRewrite: false), BodyRuleRefusal(.refused, "body_rule_assertion_bound"))
        XCTAssertNil(try openAI.check(bytes(#"{"model":"gpt-4o-mini","max_tokens":3}"#), mayRewrite: false))
    }

    func testStream() throws {
        let required = BodyRule(stream: .required)
        XCTAssertEqual(refusal(required, #"{"model":"m"}"#), BodyRuleRefusal(.refused, "body_rule_stream"))
        XCTAssertEqual(refusal(required, #"{"stream":false}"#), BodyRuleRefusal(.refused, "body_rule_stream"))
        XCTAssertEqual(refusal(required, #"{"stream":"true"}"#), BodyRuleRefusal(.refused, "body_rule_stream"))
        XCTAssertNil(try required.check(bytes(#"{"stream":true}"#), mayRewrite: true))
        let forbidden = BodyRule(stream: .forbidden)
        XCTAssertEqual(refusal(forbidden, #"{"stream":true}"#), BodyRuleRefusal(.refused, "body_rule_stream"))
        XCTAssertNil(try forbidden.check(bytes(#"{"stream":false}"#), mayRewrite: true))
        XCTAssertNil(try forbidden.check(bytes(#"{}"#), mayRewrite: true))
    }

    func testChoicesAreOneUnlessConfigured() throws {
        XCTAssertEqual(refusal(BodyRule(), #"{"n":2}"#), BodyRuleRefusal(.refused, "body_rule_n"))
        XCTAssertEqual(refusal(BodyRule(), #"{"n":0}"#), BodyRuleRefusal(.refused, "body_rule_n"))
        XCTAssertEqual(refusal(BodyRule(), #"{"generationConfig":{"candidateCount":2}}"#), BodyRuleRefusal(.refused, "body_rule_n"))
        XCTAssertNil(try BodyRule().check(bytes(#"{"n":1}"#), mayRewrite: true))
        XCTAssertNil(try BodyRule(maxChoices: 3).check(bytes(#"{"n":3,"generationConfig":{"candidateCount":3}}"#), mayRewrite: true))
    }

    func testGooglesProtoNamesAreCheckedAsTheirJSONNamesAre() throws {
        // Google's APIs take a field by its JSON name or its proto name alike.
        let gemini = BodyRule(maxTokens: 1024, capMember: .generationConfigMaxOutputTokens)
        XCTAssertEqual(refusal(gemini, #"{"contents":[],"generationConfig":{"candidate_count":8,"maxOutputTokens":100}}"#),
                       BodyRuleRefusal(.refused, "body_rule_n"))
        XCTAssertEqual(refusal(gemini, #"{"contents":[],"generationConfig":{"max_output_tokens":100000}}"#),
                       BodyRuleRefusal(.refused, "body_rule_max_tokens"))
        XCTAssertEqual(refusal(gemini, #"{"contents":[],"generation_config":{"max_output_tokens":100000}}"#),
                       BodyRuleRefusal(.refused, "body_rule_max_tokens"))
        XCTAssertEqual(refusal(gemini, #"{"contents":[],"generation_config":{"candidateCount":8}}"#), BodyRuleRefusal(.refused, "body_rule_n"))
        // Both spellings of the object in one body: which one the provider reads is not Keyward's to guess.
        XCTAssertEqual(refusal(gemini, #"{"generationConfig":{"maxOutputTokens":10},"generation_config":{"max_output_tokens":99999}}"#),
                       BodyRuleRefusal(.malformed, "json_ambiguous"))
        // A proto-named cap within bounds counts as the body's cap: nothing is added.
        let body = #"{"contents":[],"generation_config":{"max_output_tokens":512}}"#
        XCTAssertEqual(try forwarded(gemini, body), body)
        // A proto-named object without a cap gets the cap inside it, not a second object.
        XCTAssertEqual(try forwarded(gemini, #"{"contents":[],"generation_config":{"temperature":1}}"#),
                       #"{"contents":[],"generation_config":{"temperature":1,"maxOutputTokens":1024}}"#)
    }

    func testWhatIsNotOneStrictObjectIsMalformed() {
        let cases: [(String, String)] = [
            (#"{"model":"gpt-4o-mini","model":"gpt-4o"}"#, "json_ambiguous"),
            (#"{"model":"gpt-4o-mini","messages":[{"role":"user","role":"system"}]}"#, "json_ambiguous"),
            (#"["model"]"#, "json_not_object"),
            (#""text""#, "json_not_object"),
            ("", "json_malformed"),
            (#"{"model":"gpt-4o-mini""#, "json_malformed"),
            (#"{"model":"gpt-4o-mini"} x"#, "json_malformed"),
            ("\u{FEFF}{}", "json_malformed"),
            (#"{"a":01}"#, "json_malformed"),
            (#"{"a":1.}"#, "json_malformed"),
            (String(repeating: "[", count: 10) + String(repeating: "]", count: 10), "json_not_object"),
            ("{\"a\":" + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "}", "json_too_deep"),
        ]
        for (body, reason) in cases {
            XCTAssertEqual(refusal(openAI, body), BodyRuleRefusal(.malformed, reason), body)
        }
        // Names compare unescaped, and a large object through a set: still every duplicate.
        let many = (0..<40).map { "\"k\($0)\":1" }.joined(separator: ",")
        for body in [#"{"a":1,"\u0061":2}"#, "{" + many + ",\"k7\":2}", "{\"x\":{" + many + ",\"k39\":0}}"] {
            XCTAssertEqual(refusal(openAI, body), BodyRuleRefusal(.malformed, "json_ambiguous"), body)
        }
        XCTAssertNil(try BodyRule(models: ["m"]).check(Array(("{" + many + ",\"model\":\"m\"}").utf8), mayRewrite: true), "no false duplicate")
        // A checked member spelled another way, which a case-folding decoder would read as that member.
        for body in [#"{"model":"gpt-4o-mini","Max_Tokens":500}"#, #"{"model":"gpt-4o-mini","MODEL":"gpt-4o"}"#,
                     #"{"model":"gpt-4o-mini","Stream":true}"#, #"{"model":"gpt-4o-mini","\u017Ftream":true}"#,
                     #"{"model":"gpt-4o-mini","N":8}"#, #"{"model":"gpt-4o-mini","max_completion_to\u212Aens":9999}"#] {
            XCTAssertEqual(refusal(openAI, body), BodyRuleRefusal(.malformed, "json_ambiguous"), body)
        }
        let gemini = BodyRule(maxTokens: 512, capMember: .generationConfigMaxOutputTokens)
        XCTAssertEqual(refusal(gemini, #"{"contents":[],"generationConfig":{"MaxOutputTokens":99999}}"#),
                       BodyRuleRefusal(.malformed, "json_ambiguous"))
        XCTAssertEqual(refusal(gemini, #"{"contents":[],"GenerationConfig":{"maxOutputTokens":99999}}"#),
                       BodyRuleRefusal(.malformed, "json_ambiguous"))
        // Other members keep whatever case they have.
        XCTAssertEqual(try forwarded(openAI, #"{"model":"gpt-4o-mini","max_tokens":10,"Messages":[],"Temperature":1}"#),
                       #"{"model":"gpt-4o-mini","max_tokens":10,"Messages":[],"Temperature":1}"#)
        // RFC 3629: overlong forms, encoded surrogates, truncated sequences and bytes past U+10FFFF are not UTF-8.
        for bad: [UInt8] in [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0xFF]] {
            let body = Array(#"{"model":"gpt-4o-mini","x":""#.utf8) + bad + Array(#""}"#.utf8)
            XCTAssertThrowsError(try openAI.check(body, mayRewrite: true), "\(bad)") { error in
                XCTAssertEqual(error as? BodyRuleRefusal, BodyRuleRefusal(.malformed, "json_malformed"))
            }
        }
        XCTAssertNotNil(try openAI.check(Array(#"{"model":"gpt-4o-mini","x":"é€😀"}"#.utf8), mayRewrite: true))
        // Fractions and exponents are JSON numbers here (temperature, top_p).
        XCTAssertNil(try BodyRule().check(bytes(#"{"temperature":0.7,"top_p":1E-2,"x":-0}"#), mayRewrite: true))
    }

    // MARK: providers.toml

    func testTheTableLoadsWithItsDefaults() throws {
        let text = providerText(allow: """
            [{ method = "POST", path = "/v1/chat/completions", cost = 2, json = { models = ["gpt-4o-mini"], max_tokens = 1024, max_tokens_member = "max_completion_tokens", stream = "required", n = 2 } },
             { method = "POST", path = "/v1/messages", json = { } }]
            """)
        let provider = try XCTUnwrap(registry(text).provider(named: "demo"))
        XCTAssertEqual(provider.rule(method: "POST", segments: ["v1", "chat", "completions"])?.body,
                       BodyRule(models: ["gpt-4o-mini"], maxTokens: 1024, capMember: .maxCompletionTokens, stream: .required, maxChoices: 2))
        XCTAssertEqual(provider.rule(method: "POST", segments: ["v1", "messages"])?.body, BodyRule())
        XCTAssertNil(provider.rule(method: "GET", segments: ["v1", "messages"]))
    }

    func testBadTablesNameFileLineAndKey() {
        func errors(_ json: String, method: String = "POST") -> [String] {
            configErrors {
                _ = try registry(providerText(allow: "[{ method = \"\(method)\", path = \"/v1/x\", json = \(json) }]"))
            }.map(\.description)
        }
        XCTAssertEqual(errors("{ models = [] }"),
                       ["p.toml:5: demo.allow[0].json.models: lists no model, so every call would be refused: name at least one, or leave models out for any"])
        XCTAssertEqual(errors("{ models = [\"\"] }"), ["p.toml:5: demo.allow[0].json.models[0]: must be a model name of 1-256 characters"])
        XCTAssertEqual(errors("{ max_tokens = -1 }"), ["p.toml:5: demo.allow[0].json.max_tokens: must be in 1...10000000 tokens"])
        XCTAssertEqual(errors("{ max_tokens = 0 }"), ["p.toml:5: demo.allow[0].json.max_tokens: must be in 1...10000000 tokens"])
        XCTAssertEqual(errors("{ n = -2 }"), ["p.toml:5: demo.allow[0].json.n: must be in 1...128 choices"])
        XCTAssertEqual(errors("{ stream = \"yes\" }"), ["p.toml:5: demo.allow[0].json.stream: must be \"any\", \"required\" or \"forbidden\""])
        XCTAssertEqual(errors("{ max_tokens_member = \"max_tokens\" }"),
                       ["p.toml:5: demo.allow[0].json.max_tokens_member: names the member that carries max_tokens, which is not set"])
        XCTAssertEqual(errors("{ max_tokens = 5, max_tokens_member = \"maxTokens\" }").count, 1)
        XCTAssertEqual(errors("{ max_token = 5 }"), ["p.toml:5: demo.allow[0].json.max_token: unknown key (did you mean `max_tokens`?)"])
        XCTAssertEqual(errors("{ max_tokens = 5 }", method: "GET"),
                       ["p.toml:5: demo.allow[0].json: GET requests carry no body (Keyward refuses one): a json rule needs a method such as POST"])
        XCTAssertEqual(errors("{ models = \"gpt-4o\" }").count, 1, "a string is not a list")
    }

    // MARK: metering

    func testAMeteredStreamAsksForItsUsage() throws {
        let rule = BodyRule(models: ["m"], maxTokens: 100)
        func metered(_ body: String) throws -> String {
            String(decoding: try rule.check(bytes(body), mayRewrite: true, addStreamUsage: true) ?? bytes(body), as: UTF8.self)
        }
        XCTAssertEqual(try metered(#"{"model":"m","stream":true}"#), #"{"model":"m","stream":true,"max_tokens":100,"stream_options":{"include_usage":true}}"#)
        XCTAssertEqual(try metered(#"{"model":"m","stream":true,"max_tokens":5}"#), #"{"model":"m","stream":true,"max_tokens":5,"stream_options":{"include_usage":true}}"#)
        XCTAssertEqual(try metered(#"{"model":"m","stream_options":{},"stream":true,"max_tokens":5}"#),
                       #"{"model":"m","stream_options":{"include_usage":true},"stream":true,"max_tokens":5}"#)
        XCTAssertEqual(try metered(#"{"stream_options":{"x":1},"model":"m","stream":true}"#),
                       #"{"stream_options":{"x":1,"include_usage":true},"model":"m","stream":true,"max_tokens":100}"#)
        let asked = #"{"model":"m","stream":true,"max_tokens":5,"stream_options":{"include_usage":true}}"#
        XCTAssertEqual(try metered(asked), asked)
        XCTAssertEqual(try metered(#"{"model":"m","max_tokens":5}"#), #"{"model":"m","max_tokens":5}"#, "a plain call reports usage anyway")
        do {
            _ = try rule.check(bytes(#"{"model":"m","stream":true,"max_tokens":5,"stream_options":{"include_usage":false}}"#), mayRewrite: true, addStreamUsage: true)
            XCTFail("a metered stream that refuses to report usage went through")
        } catch {
            XCTAssertEqual(error, BodyRuleRefusal(.refused, "body_rule_stream_usage"))
        }
        do {
            _ = try rule.check(bytes(#"{"model":"m","stream":true,"max_tokens":5}"#), mayRewrite: false, addStreamUsage: true)
            XCTFail("a signed body was to be rewritten")
        } catch {
            XCTAssertEqual(error, BodyRuleRefusal(.refused, "body_rule_assertion_bound"))
        }
    }

    func testAMeteredRuleLoadsWithItsHold() throws {
        let text = providerText(allow: """
            [{ method = "POST", path = "/v1/chat/completions", meter = "openai", credits_per_1k_tokens = { input = 1, output = 4 }, json = { max_tokens = 1024, n = 2 } }]
            """)
        let rule = try XCTUnwrap(registry(text).provider(named: "demo")?.rule(method: "POST", segments: ["v1", "chat", "completions"]))
        XCTAssertEqual(rule.meter, MeterRule(format: .openAI, inputPer1k: 1, outputPer1k: 4))
        XCTAssertEqual(rule.meteredHold(bodyBytes: 100), 9)   // ⌈(100 + 2 × 1024 × 4) / 1000⌉
        XCTAssertNil(AllowRule(method: "POST", path: try PathPattern.parse("/x"), cost: 3).meteredHold(bodyBytes: 100))
    }

    func testBadMeteredRulesNameFileLineAndKey() {
        func errors(_ rule: String) -> [String] {
            configErrors { _ = try registry(providerText(allow: "[{ method = \"POST\", path = \"/v1/x\", \(rule) }]")) }.map(\.description)
        }
        let rates = "credits_per_1k_tokens = { input = 1, output = 4 }"
        XCTAssertEqual(errors("meter = \"openai\", \(rates)"),
                       ["p.toml:5: demo.allow[0].meter: a metered rule needs json = { max_tokens = … }: its worst case, held before the call, is bounded by the output cap"])
        XCTAssertEqual(errors("meter = \"openai\", json = { max_tokens = 5 }"),
                       ["p.toml:5: demo.allow[0].meter: a metered rule needs credits_per_1k_tokens = { input = …, output = … }"])
        XCTAssertEqual(errors("meter = \"mistral\", \(rates), json = { max_tokens = 5 }"),
                       ["p.toml:5: demo.allow[0].meter: must be \"openai\", \"anthropic\" or \"gemini\" (where the provider reports usage)"])
        XCTAssertEqual(errors("meter = \"openai\", cost = 2, \(rates), json = { max_tokens = 5 }"),
                       ["p.toml:5: demo.allow[0].cost: a metered rule is charged by the usage the provider reports: leave cost out"])
        XCTAssertEqual(errors("meter = \"openai\", credits_per_1k_tokens = { input = -1, output = 4 }, json = { max_tokens = 5 }"),
                       ["p.toml:5: demo.allow[0].credits_per_1k_tokens.input: must be in 0...1000000 credits per 1,000 tokens"])
        XCTAssertEqual(errors("\(rates), json = { max_tokens = 5 }"),
                       ["p.toml:5: demo.allow[0].credits_per_1k_tokens: prices tokens, but the rule has no meter: add meter = \"openai\", \"anthropic\" or \"gemini\""])
        XCTAssertEqual(errors("meter = \"openai\", credits_per_1k_tokens = { input = 1 }, json = { max_tokens = 5 }").count, 1)
    }
}
