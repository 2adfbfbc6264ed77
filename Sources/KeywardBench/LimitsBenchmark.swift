import Foundation
import Keyward
import Limits

/// `keyward-bench limits`: rate-limited decisions per second for one device whose day window
/// already holds 0, then 100,000 admissions (the limits never refuse), same run. The figures
/// should match: a decision's work does not grow with the window's fill.
enum LimitsBenchmark {
    static let usage = "usage: keyward-bench limits [--decisions N per run (1000000)]"

    static func run(_ arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do { options = try CommandLineOptions(arguments, valueFlags: ["decisions"]) } catch {
            print("\(error)\n\(usage)")
            return 2
        }
        let decisions = max(1, Int(options.value("decisions") ?? "1000000") ?? 1_000_000)
        // What `[providers.x.rate_limit]` with per_minute and per_day high enough never to refuse becomes.
        let rules = [LimitRule(limit: 10_000_000, windowMillis: 60_000), LimitRule(limit: 10_000_000, windowMillis: 86_400_000)]
        let start: Int64 = 1_800_000_000_000
        var figures: [Double] = []
        for prefill in [0, 100_000] {
            let engine = LimitsEngine()
            let key = "openai|device-0"
            // Spread over the last 23 h, as a busy device's day looks.
            for index in 0..<prefill {
                engine.restore(key: key, rules: rules, atMillis: start - 82_800_000 + Int64(index) * 828)
            }
            var refused = 0
            let began = DispatchTime.now().uptimeNanoseconds
            for index in 0..<decisions {
                // About a million decisions a second of clock: every call moves time on a little.
                if engine.admit(key: key, rules: rules, nowMillis: start + Int64(index / 1_000)) != .admitted { refused += 1 }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
            figures.append(Double(decisions) / seconds)
            print(String(format: "limits, one device, %d admissions in its day window: %.0f decisions/s (%d refused)",
                         prefill, Double(decisions) / seconds, refused))
            if refused > 0 { return 1 }
        }
        print(String(format: "full/empty decisions ratio: %.2f", figures[1] / figures[0]))
        return 0
    }
}
