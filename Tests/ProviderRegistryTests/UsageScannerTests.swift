import XCTest
@testable import ProviderRegistry

/// The usage scanners read each provider's reported usage from its answer however the bytes are
/// split: every test feeds the answer whole, then split at every byte boundary, then byte by byte.
final class UsageScannerTests: XCTestCase {
    private func usage(_ format: MeterRule.Format, sse: Bool, _ text: String, file: StaticString = #filePath, line: UInt = #line) -> UsageScanner.Usage {
        let bytes = Array(text.utf8)
        var whole = UsageScanner(format: format, serverSentEvents: sse)
        whole.scan(bytes)
        for split in 0...bytes.count {
            var scanner = UsageScanner(format: format, serverSentEvents: sse)
            scanner.scan(Array(bytes[..<split]))
            scanner.scan(Array(bytes[split...]))
            XCTAssertEqual(scanner.usage, whole.usage, "split at \(split)", file: file, line: line)
        }
        var single = UsageScanner(format: format, serverSentEvents: sse)
        for byte in bytes { single.scan([byte]) }
        XCTAssertEqual(single.usage, whole.usage, "byte by byte", file: file, line: line)
        return whole.usage
    }

    // Answers in the shapes the providers document (OpenAI chat completions and responses,
    // Anthropic messages, Gemini generateContent), with content that spells the keys looked for.

    func testOpenAIJSONAnswer() {
        let text = #"""
            {"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",
            "content":"say \"usage\":{\"prompt_tokens\":1}"},"finish_reason":"stop"}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500,
            "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}}
            """#
        XCTAssertEqual(usage(.openAI, sse: false, text), UsageScanner.Usage(input: 1200, output: 300))
    }

    func testOpenAIStreamReportsInItsLastChunk() {
        let text = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n"
            + "data: {\"choices\":[{\"delta\":{\"content\":\"\\\"usage\\\":{\\\"completion_tokens\\\":1}\"}}],\"usage\":null}\n\n"
            + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":300,\"total_tokens\":1500}}\n\n"
            + "data: [DONE]\n\n"
        XCTAssertEqual(usage(.openAI, sse: true, text), UsageScanner.Usage(input: 1200, output: 300))
        // Cut before the last chunk: nothing reported.
        XCTAssertEqual(usage(.openAI, sse: true, "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n"), UsageScanner.Usage())
    }

    func testOpenAIResponsesNamesItsFiguresLikeAnthropic() {
        let text = #"{"object":"response","output":[],"usage":{"input_tokens":10,"output_tokens":20,"output_tokens_details":{"reasoning_tokens":5}}}"#
        XCTAssertEqual(usage(.openAI, sse: false, text), UsageScanner.Usage(input: 10, output: 20))
    }

    func testAStreamedResponsesCallReportsInResponseCompleted() {
        let text = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"usage\":null}}\n\n"
            + "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n"
            + "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\","
            + "\"usage\":{\"input_tokens\":10,\"output_tokens\":20,\"total_tokens\":30}}}\n\n"
        XCTAssertEqual(usage(.openAI, sse: true, text), UsageScanner.Usage(input: 10, output: 20))
    }

    func testALineFeedAfterABackslashStillEndsTheEventsLine() {
        // Found by fuzz-bodyrule: a line ending inside a string right after a backslash. Each line
        // is its own JSON value, so the next line's usage counts however the bytes are split.
        let text = "data: {\"a\\\ndata: {\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\n"
        XCTAssertEqual(usage(.openAI, sse: true, text), UsageScanner.Usage(input: 5, output: 7))
    }

    func testAnthropicUsageInsideAToolCallsInputIsNotTheAnswers() {
        // The model writes tool_use.input: a usage object there must not replace the real figures.
        let text = #"{"usage":{"input_tokens":100000,"output_tokens":1000},"content":[{"type":"tool_use","#
            + #""input":{"usage":{"input_tokens":0,"cache_read_input_tokens":0}}}]}"#
        XCTAssertEqual(usage(.anthropic, sse: false, text), UsageScanner.Usage(input: 100000, output: 1000))
    }

    func testUsageDeeperThanTheTopLevelIsNotTheAnswers() {
        // A tool's arguments object (a real object in the answer) holding a "usage" member.
        let text = #"{"content":[{"type":"tool_use","input":{"usage":{"prompt_tokens":1,"completion_tokens":1}}}]}"#
        XCTAssertEqual(usage(.openAI, sse: false, text), UsageScanner.Usage())
    }

    func testAnthropicJSONAnswer() {
        let text = #"{"id":"msg_1","type":"message","content":[{"type":"text","text":"\"usage\": {\"output_tokens\": 2}"}],"#
            + #""usage":{"input_tokens":1000,"cache_creation_input_tokens":150,"cache_read_input_tokens":50,"output_tokens":300}}"#
        XCTAssertEqual(usage(.anthropic, sse: false, text), UsageScanner.Usage(input: 1200, output: 300))
    }

    func testAnthropicStreamTakesInputFromMessageStartAndOutputFromMessageDelta() {
        let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"content\":[],"
            + "\"usage\":{\"input_tokens\":1200,\"output_tokens\":1}}}\n\n"
        let delta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
        let end = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":300}}\n\n"
            + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        XCTAssertEqual(usage(.anthropic, sse: true, start + delta + end), UsageScanner.Usage(input: 1200, output: 300))
        // Cut before message_delta: the input is known, the output is not.
        XCTAssertEqual(usage(.anthropic, sse: true, start + delta), UsageScanner.Usage(input: 1200, output: nil))
        // CRLF line ends read the same.
        XCTAssertEqual(usage(.anthropic, sse: true, (start + end).replacingOccurrences(of: "\n", with: "\r\n")),
                       UsageScanner.Usage(input: 1200, output: 300))
    }

    func testGeminiJSONAndStreamedArrayAndSSE() {
        let one = #"{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":250,"thoughtsTokenCount":50,"totalTokenCount":1500}}"#
        XCTAssertEqual(usage(.gemini, sse: false, one), UsageScanner.Usage(input: 1200, output: 300))
        let array = "[" + #"{"candidates":[],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":10}}"# + ",\r\n" + one + "]"
        XCTAssertEqual(usage(.gemini, sse: false, array), UsageScanner.Usage(input: 1200, output: 300))
        let sse = "data: " + #"{"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":10}}"# + "\r\n\r\n" + "data: " + one + "\r\n\r\n"
        XCTAssertEqual(usage(.gemini, sse: true, sse), UsageScanner.Usage(input: 1200, output: 300))
        // Gemini leaves out a zero candidatesTokenCount.
        XCTAssertEqual(usage(.gemini, sse: false, #"{"usageMetadata":{"promptTokenCount":7}}"#), UsageScanner.Usage(input: 7, output: 0))
    }

    func testNothingLikeJSONYieldsNothing() {
        XCTAssertEqual(usage(.openAI, sse: false, "<html>usage: prompt_tokens 5</html>"), UsageScanner.Usage())
        XCTAssertEqual(usage(.openAI, sse: false, String(repeating: "{\"usage\":", count: 50) + "1"), UsageScanner.Usage())
        XCTAssertEqual(usage(.openAI, sse: false, #"{"usage":{"prompt_tokens":-5,"completion_tokens":"3"}}"#), UsageScanner.Usage())
    }

    func testAFigureWithAFractionOrAnExponentIsNoTokenCount() {
        // Read whole or not at all: never as the digits after its `.` or `e`.
        for figure in ["1200.0", "3e2", "250.75", "0.5", "1E+3", "12.5e1"] {
            XCTAssertEqual(usage(.openAI, sse: false, #"{"usage":{"prompt_tokens":\#(figure),"completion_tokens":\#(figure)}}"#),
                           UsageScanner.Usage(), figure)
        }
        XCTAssertEqual(usage(.openAI, sse: false, #"{"usage":{"prompt_tokens":1200.0,"completion_tokens":300}}"#),
                       UsageScanner.Usage(output: 300))
    }

    func testCreditsRoundUpOncePerCall() {
        let rule = MeterRule(format: .openAI, inputPer1k: 1, outputPer1k: 4)
        XCTAssertEqual(rule.credits(input: 1_200, output: 300), 3)   // ⌈2.4⌉
        XCTAssertEqual(rule.credits(input: 1_000, output: 0), 1)
        XCTAssertEqual(rule.credits(input: 0, output: 0), 0)
        XCTAssertEqual(rule.credits(input: 1, output: 0), 1)
        XCTAssertEqual(rule.holdCredits(bodyBytes: 500, outputCap: 1024), 5)   // ⌈(500 + 4096) / 1000⌉
        XCTAssertEqual(MeterRule(format: .gemini, inputPer1k: 0, outputPer1k: 0).holdCredits(bodyBytes: 9, outputCap: 9), 1)
        XCTAssertEqual(rule.credits(input: Int.max, output: Int.max), 5_000_000_000, "figures are bounded at 10^12 tokens")
    }
}
