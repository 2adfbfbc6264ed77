// libFuzzer target: an allow rule's JSON body rule (`BodyRule.check`, the strict JSON reader under
// it) and the usage scanners (`UsageScanner`, each provider format, JSON and server-sent events) on
// arbitrary bytes. Refusals are values; any trap is a bug. Properties:
// - a body a rule rewrites keeps every byte it had, in order (only members are inserted), and the
//   rewritten body passes the same rule unchanged (the cap and `include_usage` are then present);
// - a body passed unchanged by a rule that may rewrite passes unchanged where it may not (a signed
//   body), and a body a rule had to rewrite is refused where it may not;
// - a scanner reports the same usage whether the bytes come whole or split at any point taken from
//   the input, and never a negative figure.
import ProviderRegistry

private let rules: [BodyRule] = [
    BodyRule(models: ["gpt-4o-mini"], maxTokens: 1024, capMember: .maxCompletionTokens, stream: .any),
    BodyRule(maxTokens: 800),
    BodyRule(maxTokens: 512, capMember: .generationConfigMaxOutputTokens, maxChoices: 2),
    BodyRule(maxTokens: 64, capMember: .maxOutputTokens, stream: .required),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBodyRule(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for (index, rule) in rules.enumerated() {
        let addStreamUsage = index == 0
        guard case .passed(let rewritten) = verdict(rule, bytes, mayRewrite: true, addStreamUsage) else { continue }
        let signed = verdict(rule, bytes, mayRewrite: false, addStreamUsage)
        if let rewritten {
            precondition(isSubsequence(bytes, of: rewritten), "a rewrite changed or dropped a byte")
            precondition(verdict(rule, rewritten, mayRewrite: true, addStreamUsage) == .passed(nil),
                         "a rewritten body does not pass its rule unchanged")
            precondition(signed == .refused, "a body that needed a member was accepted where it may not be rewritten")
        } else {
            precondition(signed == .passed(nil), "a body passed unchanged is refused where it may not be rewritten")
        }
    }
    let split = size == 0 ? 0 : Int(bytes[0]) * size / 256
    for format in [MeterRule.Format.openAI, .anthropic, .gemini] {
        for events in [false, true] {
            var whole = UsageScanner(format: format, serverSentEvents: events)
            whole.scan(bytes)
            var pieces = UsageScanner(format: format, serverSentEvents: events)
            pieces.scan(Array(bytes[..<split]))
            pieces.scan(Array(bytes[split...]))
            precondition(whole.usage == pieces.usage, "usage depends on how the bytes arrive")
            precondition((whole.usage.input ?? 0) >= 0 && (whole.usage.output ?? 0) >= 0, "a negative figure")
        }
    }
    return 0
}

private enum Verdict: Equatable {
    case passed([UInt8]?)
    case refused
}

private func verdict(_ rule: BodyRule, _ body: [UInt8], mayRewrite: Bool, _ addStreamUsage: Bool) -> Verdict {
    do { return .passed(try rule.check(body, mayRewrite: mayRewrite, addStreamUsage: addStreamUsage)) } catch { return .refused }
}

/// Whether every byte of `original` appears in `rewritten`, in order.
private func isSubsequence(_ original: [UInt8], of rewritten: [UInt8]) -> Bool {
    var index = rewritten.startIndex
    for byte in original {
        guard let found = rewritten[index...].firstIndex(of: byte) else { return false }
        index = found + 1
    }
    return true
}
