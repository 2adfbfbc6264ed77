@testable import ProviderRegistry
import XCTest
@testable import Keyward

/// Which metered streams are made to ask for their usage: OpenAI chat completions report a
/// stream's usage only with `stream_options.include_usage`; the Responses API (a rule capping
/// `max_output_tokens`) always reports it and has no such option; other formats never need it.
final class StreamUsageRequestTests: XCTestCase {
    private func rule(_ format: MeterRule.Format, _ capMember: BodyRule.TokenMember) -> (AllowRule, BodyRule) {
        let body = BodyRule(maxTokens: 1024, capMember: capMember)
        let allow = AllowRule(method: "POST", path: try! PathPattern.parse("/v1/x"), body: body,
                              meter: MeterRule(format: format, inputPer1k: 1, outputPer1k: 4))
        return (allow, body)
    }

    func testOnlyOpenAIChatCompletionsAreGivenIncludeUsage() {
        for member in [BodyRule.TokenMember.maxTokens, .maxCompletionTokens] {
            let (allow, body) = rule(.openAI, member)
            XCTAssertTrue(ProxyAuthorizer.asksForStreamUsage(allow, body), member.rawValue)
        }
        let (responses, responsesBody) = rule(.openAI, .maxOutputTokens)
        XCTAssertFalse(ProxyAuthorizer.asksForStreamUsage(responses, responsesBody))
        let (anthropic, anthropicBody) = rule(.anthropic, .maxTokens)
        XCTAssertFalse(ProxyAuthorizer.asksForStreamUsage(anthropic, anthropicBody))
        let unmetered = BodyRule(maxTokens: 1024, capMember: .maxCompletionTokens)
        XCTAssertFalse(ProxyAuthorizer.asksForStreamUsage(AllowRule(method: "POST", path: try! PathPattern.parse("/v1/x"), body: unmetered), unmetered))
    }
}
