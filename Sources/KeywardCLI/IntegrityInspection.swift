import Foundation
import Keyward
import PlayIntegrity

/// What `keyward inspect integrity` prints: the decoding step, then every verdict-policy check.
struct IntegrityInspection {
    struct Step {
        let name: String
        let outcome: VerdictCheckOutcome
    }

    let mode: IntegrityMode
    /// Decrypting and verifying the classic token, or reading the verdict file.
    let decoding: Step
    /// The policy's report; nil when decoding failed (the checks did not run).
    var checks: VerdictReport?
    /// `appIntegrity.packageName`, when the verdict has one.
    var packageName: String?

    var steps: [Step] {
        [decoding] + (checks?.results.map { Step(name: $0.name, outcome: $0.outcome) } ?? [])
    }

    var isValid: Bool { decoding.outcome.failureReason == nil && (checks?.isValid ?? false) }

    /// The first failure's slug.
    var reason: String? { steps.lazy.compactMap(\.outcome.failureReason).first }

    var plainText: String {
        var lines = ["integrity (\(mode.rawValue)): " + (reason.map { "INVALID (\($0))" } ?? "valid")]
        for step in steps {
            let name = step.name.padding(toLength: 42, withPad: " ", startingAt: 0)
            switch step.outcome {
            case .passed(let seen): lines.append("  \(name) ok       \(seen)")
            case .failed(let reason, let detail): lines.append("  \(name) FAILED   \(reason): \(detail)")
            case .notChecked(let note): lines.append("  \(name) info     \(note)")
            }
        }
        if checks == nil { lines.append("  verdict checks not run") }
        if isValid, let packageName { lines.append("  package_name: \(packageName)") }
        return lines.joined(separator: "\n") + "\n"
    }

    private struct JSONReport: Encodable {
        struct Step: Encodable {
            let name: String
            let result: String
            let reason: String?
            let detail: String
        }
        let kind = "integrity"
        let mode: String
        let valid: Bool
        let reason: String?
        let steps: [Step]
        let details: [String: String]
    }

    var jsonText: String {
        let steps = steps.map { step -> JSONReport.Step in
            switch step.outcome {
            case .passed(let seen): return .init(name: step.name, result: "ok", reason: nil, detail: seen)
            case .failed(let reason, let detail): return .init(name: step.name, result: "failed", reason: reason, detail: detail)
            case .notChecked(let note): return .init(name: step.name, result: "not_checked", reason: nil, detail: note)
            }
        }
        var details: [String: String] = [:]
        if isValid, let packageName { details["package_name"] = packageName }
        let report = JSONReport(mode: mode.rawValue, valid: isValid, reason: reason, steps: steps, details: details)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(report) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
