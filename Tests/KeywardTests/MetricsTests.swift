import Foundation
import Keyward
import KeywardDemo
import XCTest

/// The admin listener's `/metrics` (Prometheus text format 0.0.4) moves with the traffic.
final class MetricsTests: XCTestCase {
    func testTheAdminListenerAnswersAnUnknownPath404WhateverTheMethodAndAKnownOne405() throws {
        let env = try TestDeployment()
        defer { env.shutdown() }
        let admin = DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
        for method in ["GET", "POST", "DELETE"] {
            for path in ["/nonexistent", "/v1/challenge", "/p/chat/x"] {
                let answer = try admin.call(method, path)
                XCTAssertEqual(answer.status, 404, "\(method) \(path)")
                XCTAssertEqual(answer.header("keyward-error"), "not_found", "\(method) \(path)")
            }
        }
        for path in ["/metrics", "/healthz", "/readyz"] {
            let answer = try admin.call("POST", path)
            XCTAssertEqual(answer.status, 405, path)
            XCTAssertEqual(answer.header("allow"), "GET, HEAD", path)
            XCTAssertEqual(answer.header("keyward-error"), "method_not_allowed", path)
        }
    }

    func testMetricsParseAsPrometheusTextAndCountTheTraffic() throws {
        let env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 2 }")
        defer { env.shutdown() }
        let admin = DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
        let before = try PrometheusText(admin.call("GET", "/metrics").body)

        let (_, token) = try env.session()  // one challenge, one attestation
        for _ in 0..<3 { _ = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]) }  // 200, 200, 429
        _ = try env.client.call("GET", "/p/chat/v1/%2e%2e/x", headers: [env.bearer(token)])

        let response = try admin.call("GET", "/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("content-type"), "text/plain; version=0.0.4; charset=utf-8")
        let after = try PrometheusText(response.body)
        func delta(_ sample: String) -> Double { (after.samples[sample] ?? 0) - (before.samples[sample] ?? 0) }

        XCTAssertEqual(delta(#"keyward_requests_total{route="challenge",provider="-",status="200"}"#), 1)
        XCTAssertEqual(delta(#"keyward_requests_total{route="attest_ios",provider="-",status="200"}"#), 1)
        XCTAssertEqual(delta(#"keyward_requests_total{route="proxy",provider="chat",status="200"}"#), 2)
        XCTAssertEqual(delta(#"keyward_requests_total{route="proxy",provider="chat",status="429"}"#), 1)
        XCTAssertEqual(delta(#"keyward_requests_total{route="proxy",provider="chat",status="400"}"#), 1)
        XCTAssertEqual(delta(#"keyward_attestations_total{platform="ios",outcome="ok"}"#), 1)
        XCTAssertEqual(delta(#"keyward_rate_limited_total{limit="provider"}"#), 1)
        XCTAssertEqual(delta(#"keyward_upstream_header_seconds_count{provider="chat"}"#), 2)
        XCTAssertEqual(after.samples["keyward_open_streams"], 0)
        // The client keeps its connection to the public listener alive between calls.
        XCTAssertGreaterThanOrEqual(after.samples["keyward_client_connections"] ?? 0, 1)
        XCTAssertEqual(after.types["keyward_client_connections"], "gauge")
        XCTAssertEqual(after.samples["keyward_connection_limit_reached_total"], 0)
        // Never reloaded: the configuration's load at start is its last success.
        XCTAssertEqual(after.samples["keyward_config_last_reload_success_timestamp_seconds"] ?? 0, Double(env.deployment.time.nowSeconds()), accuracy: 5)
        XCTAssertEqual(after.types["keyward_upstream_header_seconds"], "histogram")
        XCTAssertEqual(after.types["keyward_requests_total"], "counter")
    }
}

/// A strict reader of the Prometheus text exposition format: every sample line must parse and
/// belong to a family declared by `# TYPE`; histogram buckets must be cumulative.
struct PrometheusText {
    var samples: [String: Double] = [:]
    var types: [String: String] = [:]

    struct Malformed: Error, CustomStringConvertible { let description: String }

    init(_ body: [UInt8]) throws {
        let text = String(decoding: body, as: UTF8.self)
        guard text.hasSuffix("\n") else { throw Malformed(description: "no final newline") }
        let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
        let labels = #"(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*\})?"#
        let sample = try NSRegularExpression(pattern: "^(\(name))\(labels) (-?[0-9.eE+-]+|\\+Inf|NaN)$")
        let typeLine = try NSRegularExpression(pattern: "^# TYPE (\(name)) (counter|gauge|histogram|summary|untyped)$")
        var lastBucket: [String: Double] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let line = String(line)
            let range = NSRange(line.startIndex..., in: line)
            if line.hasPrefix("# HELP ") { continue }
            if let match = typeLine.firstMatch(in: line, range: range), let n = Range(match.range(at: 1), in: line),
               let t = Range(match.range(at: 2), in: line) {
                types[String(line[n])] = String(line[t])
                continue
            }
            guard let match = sample.firstMatch(in: line, range: range), let n = Range(match.range(at: 1), in: line),
                  let v = Range(match.range(at: 3), in: line), let value = Double(line[v])
            else { throw Malformed(description: "bad line: \(line)") }
            let metric = String(line[n])
            let family = ["_bucket", "_sum", "_count"].reduce(metric) { name, suffix in
                name.hasSuffix(suffix) && types[name] == nil ? String(name.dropLast(suffix.count)) : name
            }
            guard types[family] != nil else { throw Malformed(description: "no # TYPE for \(metric)") }
            if metric.hasSuffix("_bucket"), let le = line.range(of: ",le=") ?? line.range(of: "{le=") {
                let series = String(line[..<le.lowerBound])
                if value < (lastBucket[series] ?? 0) { throw Malformed(description: "buckets not cumulative: \(line)") }
                lastBucket[series] = value
            }
            samples[String(line[..<v.lowerBound].dropLast())] = value
        }
    }
}
