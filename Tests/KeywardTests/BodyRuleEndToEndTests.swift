import Foundation
import Keyward
import KeywardDemo
import XCTest

/// An allow rule's `json` table in front of a fake OpenAI and a fake Anthropic, over loopback:
/// what is refused never reaches the provider, and what passes reaches it byte for byte, the
/// output cap added where the body named none.
final class BodyRuleEndToEndTests: XCTestCase {
    var env: TestDeployment!
    var openAI: FakeAIProvider!
    var anthropic: FakeAIProvider!

    override func setUpWithError() throws {
        openAI = FakeAIProvider(.openAI)
        anthropic = FakeAIProvider(.anthropic)
        try openAI.start()
        try anthropic.start()
        let (openAIPort, anthropicPort) = (openAI.port, anthropic.port)
        env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("openai", port: openAIPort, allow: [], extra: "")
                .replacingOccurrences(of: "allow = [  ]", with: """
                    allow = [ { method = "POST", path = "/v1/chat/completions", json = { models = ["gpt-4o-mini", "gpt-4.1-mini"], max_tokens = 1024, max_tokens_member = "max_completion_tokens" } } ]
                    """)
                + TestDeployment.loopbackProvider("openai-streamed", port: openAIPort, allow: [])
                .replacingOccurrences(of: "allow = [  ]", with: """
                    allow = [ { method = "POST", path = "/v1/chat/completions", json = { models = ["gpt-4o-mini"], max_tokens = 1024, stream = "required" } } ]
                    """)
                + TestDeployment.loopbackProvider("anthropic", port: anthropicPort, allow: [], extra: "headers = { \"anthropic-version\" = \"2023-06-01\" }")
                .replacingOccurrences(of: "allow = [  ]", with: """
                    allow = [ { method = "POST", path = "/v1/messages", json = { models = ["claude-3-5-haiku-latest"], max_tokens = 800 } } ]
                    """)
                + TestDeployment.loopbackProvider("signed", port: openAIPort, allow: [], extra: "require_assertion = true")
                .replacingOccurrences(of: "allow = [  ]", with: """
                    allow = [ { method = "POST", path = "/v1/chat/completions", json = { max_tokens = 1024 } } ]
                    """)
        })
    }

    override func tearDown() {
        env?.shutdown()
        openAI?.stop()
        anthropic?.stop()
    }

    private func post(_ provider: String, _ path: String, _ body: String, token: String) throws -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        try env.client.stream("POST", "/p/\(provider)\(path)", headers: [env.bearer(token), ("Content-Type", "application/json")],
                              body: Array(body.utf8)) { _ in }
    }

    private func header(_ headers: [(String, String)], _ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    private func assertRefused(
        _ answer: (status: Int, headers: [(String, String)], body: [UInt8]), status: Int, code: String, reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(answer.status, status, file: file, line: line)
        XCTAssertEqual(errorCode(answer.body), code, file: file, line: line)
        XCTAssertEqual(header(answer.headers, "Keyward-Error"), code, file: file, line: line)
        XCTAssertEqual(env.lastReason(route: "proxy"), reason, file: file, line: line)
    }

    /// (provider, fake, path, listed model) for both formats.
    private var formats: [(String, FakeAIProvider, String, String)] {
        [("openai", openAI, "/v1/chat/completions", "gpt-4o-mini"), ("anthropic", anthropic, "/v1/messages", "claude-3-5-haiku-latest")]
    }

    func testADisallowedModelIsRefusedAndNothingGoesUpstream() throws {
        let (_, token) = try env.session()
        for (provider, fake, path, _) in formats {
            for stream in ["false", "true"] {
                let answer = try post(provider, path, #"{"model":"gpt-4o","max_tokens":10,"stream":\#(stream),"messages":[]}"#, token: token)
                assertRefused(answer, status: 403, code: "body_rule_refused", reason: "body_rule_models")
                XCTAssertEqual(fake.received.count, 0, "\(provider): a refused body reached the provider")
            }
        }
    }

    func testAnOutputCapAboveTheRulesIsRefused() throws {
        let (_, token) = try env.session()
        for (provider, fake, path, model) in formats {
            for stream in ["false", "true"] {
                for member in ["max_tokens", "max_completion_tokens"] {
                    let answer = try post(provider, path, #"{"model":"\#(model)","\#(member)":5000,"stream":\#(stream),"messages":[]}"#, token: token)
                    assertRefused(answer, status: 403, code: "body_rule_refused", reason: "body_rule_max_tokens")
                }
            }
            XCTAssertEqual(fake.received.count, 0)
        }
    }

    func testABodyWithoutACapReachesTheProviderWithTheCapAndTheAnswerIsRelayedUnchanged() throws {
        let (_, token) = try env.session()
        let cases: [(String, FakeAIProvider, String, String, String)] = [
            ("openai", openAI, "/v1/chat/completions", "gpt-4o-mini", "\"max_completion_tokens\":1024"),
            ("anthropic", anthropic, "/v1/messages", "claude-3-5-haiku-latest", "\"max_tokens\":800"),
        ]
        for (provider, fake, path, model, cap) in cases {
            for stream in ["false", "true"] {
                let sent = #"{"model":"\#(model)","stream":\#(stream),"temperature":0.5,"messages":[{"role":"user","content":"hi"}]}"#
                let answer = try post(provider, path, sent, token: token)
                XCTAssertEqual(answer.status, 200, "\(provider) stream=\(stream)")
                let received = try XCTUnwrap(fake.received.last)
                XCTAssertEqual(String(decoding: received.body, as: UTF8.self), String(sent.dropLast()) + "," + cap + "}")
                XCTAssertEqual(answer.body, fake.answers.last, "the answer reached the client byte for byte")
                if stream == "true" {
                    XCTAssertEqual(header(answer.headers, "content-type"), "text/event-stream")
                }
            }
        }
        // A body within the cap goes through untouched.
        let within = #"{"model":"gpt-4o-mini","max_tokens":100,"messages":[]}"#
        XCTAssertEqual(try post("openai", "/v1/chat/completions", within, token: token).status, 200)
        XCTAssertEqual(openAI.received.last?.body, Array(within.utf8))
    }

    func testStreamRequiredRefusesAPlainCall() throws {
        let (_, token) = try env.session()
        let plain = try post("openai-streamed", "/v1/chat/completions", #"{"model":"gpt-4o-mini","messages":[]}"#, token: token)
        assertRefused(plain, status: 403, code: "body_rule_refused", reason: "body_rule_stream")
        let explicit = try post("openai-streamed", "/v1/chat/completions", #"{"model":"gpt-4o-mini","stream":false,"messages":[]}"#, token: token)
        assertRefused(explicit, status: 403, code: "body_rule_refused", reason: "body_rule_stream")
        XCTAssertEqual(openAI.received.count, 0)
        let streamed = try post("openai-streamed", "/v1/chat/completions", #"{"model":"gpt-4o-mini","stream":true,"messages":[]}"#, token: token)
        XCTAssertEqual(streamed.status, 200)
        XCTAssertEqual(streamed.body, openAI.answers.last)
    }

    func testABodyNamingAMemberTwiceIsABadRequest() throws {
        let (_, token) = try env.session()
        for (provider, fake, path, model) in formats {
            for stream in ["false", "true"] {
                let answer = try post(provider, path, #"{"model":"\#(model)","stream":\#(stream),"model":"gpt-4o","messages":[]}"#, token: token)
                assertRefused(answer, status: 400, code: "bad_request", reason: "json_ambiguous")
            }
            assertRefused(try post(provider, path, #"["not","an","object"]"#, token: token), status: 400, code: "bad_request", reason: "json_not_object")
            assertRefused(try post(provider, path, "", token: token), status: 400, code: "bad_request", reason: "json_malformed")
            XCTAssertEqual(fake.received.count, 0)
        }
    }

    func testABodyTheDeviceSignsIsRefusedRatherThanRewritten() throws {
        let (_, token) = try env.session()
        let answer = try post("signed", "/v1/chat/completions", #"{"model":"m","messages":[]}"#, token: token)
        assertRefused(answer, status: 403, code: "body_rule_refused", reason: "body_rule_assertion_bound")
        XCTAssertEqual(openAI.received.count, 0)
    }
}
