import Foundation
import Keyward
import ProviderRegistry

/// `keyward-bench body-rule`: the work an AI allow rule adds to one call, outside the server: the
/// `json` table's check of a typical chat-completions body (a model list, the cap added, the
/// usage request of a metered stream added), and the usage scan of a typical answer (a JSON
/// answer and a streamed one of 40 events), each `--calls` times. It prints nanoseconds per
/// call; `bench/body-rule.sh` runs it under callgrind for the instructions per call, to set
/// beside `bench/instructions.sh`'s figure for a whole proxied request.
enum BodyRuleBenchmark {
    static let usage = "usage: keyward-bench body-rule [--calls N (100000)] [--part check|json|stream (all three)]"

    /// A request as an app sends it: a system prompt, a user turn, a temperature; no cap.
    static let body = Array(("{\"model\":\"gpt-4o-mini\",\"stream\":true,\"temperature\":0.7,\"messages\":["
        + "{\"role\":\"system\",\"content\":\"You are a helpful assistant that answers in one short paragraph.\"},"
        + "{\"role\":\"user\",\"content\":\"What is the capital of France, and why is it famous?\"}]}").utf8)

    /// A JSON answer of about 600 bytes with its usage.
    static let jsonAnswer = Array(("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"gpt-4o-mini\","
        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\""
        + String(repeating: "Paris is the capital of France. ", count: 12)
        + "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":41,\"completion_tokens\":96,\"total_tokens\":137}}").utf8)

    /// A streamed answer: 40 delta events, the usage chunk, `[DONE]`.
    static let streamedAnswer: [[UInt8]] = {
        let head = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\","
        var events = (0..<40).map { index in
            Array((head + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word\(index)\"},\"finish_reason\":null}]}\n\n").utf8)
        }
        events.append(Array((head + "\"choices\":[],\"usage\":{\"prompt_tokens\":41,\"completion_tokens\":96,\"total_tokens\":137}}\n\n").utf8))
        events.append(Array("data: [DONE]\n\n".utf8))
        return events
    }()

    static func run(_ arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do { options = try CommandLineOptions(arguments, valueFlags: ["calls", "part"]) } catch {
            print("\(error)\n\(usage)")
            return 2
        }
        let calls = max(1, Int(options.value("calls") ?? "100000") ?? 100_000)
        let part = options.value("part")
        guard part == nil || ["check", "json", "stream"].contains(part!) else {
            print(usage)
            return 2
        }
        // Under callgrind one part runs alone, so the difference of two runs is that part's figure.
        let runs = { (name: String) in part == nil || part == name }
        let rule = BodyRule(models: ["gpt-4o-mini", "gpt-4.1-mini"], maxTokens: 1024, capMember: .maxCompletionTokens)
        let meter = MeterRule(format: .openAI, inputPer1k: 1, outputPer1k: 4)
        var bytes = 0
        var credits = 0

        var began = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<(runs("check") ? calls : 0) {
            guard let forwarded = try? rule.check(body, mayRewrite: true, addStreamUsage: true) else { return 1 }
            bytes &+= forwarded.count
        }
        let checkNanos = Double(DispatchTime.now().uptimeNanoseconds - began) / Double(calls)

        began = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<(runs("json") ? calls : 0) {
            var scanner = UsageScanner(format: .openAI, serverSentEvents: false)
            scanner.scan(jsonAnswer)
            let usage = scanner.usage
            credits &+= meter.credits(input: usage.input ?? 0, output: usage.output ?? 0)
        }
        let jsonNanos = Double(DispatchTime.now().uptimeNanoseconds - began) / Double(calls)

        began = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<(runs("stream") ? calls : 0) {
            var scanner = UsageScanner(format: .openAI, serverSentEvents: true)
            for event in streamedAnswer { scanner.scan(event) }
            let usage = scanner.usage
            credits &+= meter.credits(input: usage.input ?? 0, output: usage.output ?? 0)
        }
        let streamNanos = Double(DispatchTime.now().uptimeNanoseconds - began) / Double(calls)
        let streamBytes = streamedAnswer.reduce(0) { $0 + $1.count }
        let scans = (runs("json") ? 1 : 0) + (runs("stream") ? 1 : 0)
        guard credits == scans * calls else {
            print("body-rule: the scanners read \(credits) credits, expected \(scans * calls)")
            return 1
        }
        print(String(format: "body-rule: check of a %d-byte body (cap and usage request added): %.0f ns/call", body.count, checkNanos))
        print(String(format: "body-rule: usage scan of a %d-byte JSON answer: %.0f ns/call", jsonAnswer.count, jsonNanos))
        print(String(format: "body-rule: usage scan of a %d-byte stream (%d events): %.0f ns/call", streamBytes, streamedAnswer.count, streamNanos))
        print("body-rule: \(calls) calls each (forwarded \(bytes / calls) bytes a call)")
        _ = runs
        return 0
    }
}
