import Foundation
import Keyward
import KeywardDemo
import XCTest

/// One JSON line per request with every field an operator needs, and nothing secret in it; the
/// production series on `/metrics`.
final class AccessLogTests: XCTestCase {
    func testAProxiedRequestsLineCarriesEveryField() throws {
        let env = try TestDeployment()
        defer { env.shutdown() }
        let (_, token) = try env.session()
        let response = try env.client.call(
            "GET", "/p/chat/v1/models?key=hush-query-value",
            headers: [env.bearer(token), ("User-Agent", "KeywardTests/1.0 (\"quoted\")")])
        XCTAssertEqual(response.status, 200)
        let requestID = try XCTUnwrap(response.header("x-keyward-request-id"))
        let line = try XCTUnwrap(env.logLines.first { $0.contains("\"request_id\":\"\(requestID)\"") })
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])

        let time = try XCTUnwrap(object["time"] as? String)
        XCTAssertNotNil(time.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression), time)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let logged = try XCTUnwrap(formatter.date(from: time))
        XCTAssertLessThan(abs(logged.timeIntervalSinceNow), 60)
        XCTAssertEqual(object["event"] as? String, "request")
        XCTAssertEqual(object["request_id"] as? String, requestID)
        XCTAssertEqual(object["client"] as? String, "127.0.0.1")
        XCTAssertEqual(object["method"] as? String, "GET")
        XCTAssertEqual(object["route"] as? String, "proxy")
        XCTAssertEqual(object["provider"] as? String, "chat")
        XCTAssertEqual(object["path"] as? String, "/p/chat/v1/models")
        XCTAssertEqual(object["status"] as? Int, 200)
        XCTAssertEqual(object["bytes_in"] as? Int, 0)
        XCTAssertEqual(object["bytes_out"] as? Int, response.body.count)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(object["duration_ms"] as? Int), 0)
        XCTAssertEqual(object["upstream_status"] as? Int, 200)
        let firstByte = try XCTUnwrap(object["upstream_first_byte_ms"] as? Int)
        XCTAssertLessThanOrEqual(firstByte, try XCTUnwrap(object["duration_ms"] as? Int))
        XCTAssertEqual(object["user_agent"] as? String, "KeywardTests/1.0 (\"quoted\")")
        // Never the query, the session token or the provider's key.
        XCTAssertFalse(line.contains("hush-query-value"))
        XCTAssertFalse(line.contains(token))
        XCTAssertFalse(line.contains(TestDeployment.providerKey))
        XCTAssertFalse(line.contains("?"))
    }

    func testAHandshakeLineCountsTheBodyBothWays() throws {
        let env = try TestDeployment()
        defer { env.shutdown() }
        let (response, _) = try env.client.postJSON("/v1/challenge", ["x": "y"])
        let requestID = try XCTUnwrap(response.header("x-request-id"))
        let line = try XCTUnwrap(env.logLines.first { $0.contains("\"request_id\":\"\(requestID)\"") })
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(object["bytes_in"] as? Int, #"{"x":"y"}"#.utf8.count)
        XCTAssertEqual(object["bytes_out"] as? Int, response.body.count)
        XCTAssertEqual(object["path"] as? String, "/v1/challenge")
        XCTAssertNil(object["upstream_status"], "no upstream on a handshake")
    }

    func testMetricsCarryBuildProcessReloadAndLimiterSeries() throws {
        let env = try TestDeployment(settings: {
            $0.handshakeBurst = 1
            $0.handshakeRatePerSecond = 0.001
        })
        defer { env.shutdown() }
        XCTAssertEqual(try env.client.postJSON("/v1/challenge", [:]).0.status, 200)
        XCTAssertEqual(try env.client.postJSON("/v1/challenge", [:]).0.status, 429)
        XCTAssertTrue(env.deployment.server.reload())
        let admin = DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
        let metrics = try PrometheusText(admin.call("GET", "/metrics").body)
        let now = Date().timeIntervalSince1970

        let buildInfo = try XCTUnwrap(metrics.samples.first { $0.key.hasPrefix("keyward_build_info{version=\"") })
        XCTAssertEqual(buildInfo.value, 1)
        XCTAssertTrue(buildInfo.key.contains(",revision=\""), buildInfo.key)
        XCTAssertEqual(metrics.types["keyward_build_info"], "gauge")
        XCTAssertGreaterThan(try XCTUnwrap(metrics.samples["process_resident_memory_bytes"]), 1_048_576)
        let fds = try XCTUnwrap(metrics.samples["process_open_fds"])
        XCTAssertGreaterThan(fds, 3)
        XCTAssertLessThanOrEqual(fds, try XCTUnwrap(metrics.samples["process_max_fds"]))
        XCTAssertGreaterThan(try XCTUnwrap(metrics.samples["process_cpu_seconds_total"]), 0)
        XCTAssertEqual(metrics.types["process_cpu_seconds_total"], "counter")
        let start = try XCTUnwrap(metrics.samples["process_start_time_seconds"])
        XCTAssertLessThanOrEqual(start, now + 1)
        XCTAssertGreaterThan(start, now - 86_400)
        XCTAssertEqual(metrics.samples[#"keyward_config_reloads_total{outcome="ok"}"#], 1)
        XCTAssertEqual(metrics.samples["keyward_config_last_reload_successful"], 1)
        XCTAssertLessThanOrEqual(abs(try XCTUnwrap(metrics.samples["keyward_config_last_reload_success_timestamp_seconds"]) - now), 60)
        XCTAssertEqual(metrics.samples[#"keyward_rate_limited_total{limit="handshake_ip"}"#], 1)
    }
}
