import Foundation
import HTTPServer
import Keyward
import Store
import XCTest

/// An upstream's own `X-RateLimit-*` fields: replaced by Keyward's when Keyward limits the call,
/// passed through unchanged when it does not.
final class UpstreamRateLimitFieldsTests: XCTestCase {
    var env: TestDeployment!
    var upstream: HTTPServer!

    override func tearDown() {
        env?.shutdown()
        upstream?.stop()
    }

    /// Starts an upstream answering every request 200 with the provider's rate fields (in mixed
    /// case, as providers spell them) and a `[limited]` provider on it with `extra` options.
    private func deploy(extra: String, spend: SpendSettings?) throws {
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1),
            bodyLimit: { _ in 1024 },
            handler: { _, _, writer in
                writer.respond(status: 200, headers: [
                    ("Content-Type", "application/json"), ("X-RateLimit-Limit", "1000000"),
                    ("x-ratelimit-remaining", "999999"), ("X-RATELIMIT-RESET", "7"), ("X-RateLimit-Reset-Tokens", "3s"),
                ], body: Array("{}".utf8))
            })
        try server.start()
        upstream = server
        let port = server.port
        env = try TestDeployment(
            extraProviders: { _ in TestDeployment.loopbackProvider("limited", port: port, allow: [("GET", "/v1/models")], extra: extra) },
            time: ManualTimeSource(seconds: BudgetTests.start), settings: { $0.spend = spend })
    }

    /// Every value of the field `name` (any case) in `headers`, in order.
    private func values(_ name: String, _ headers: [(String, String)]) -> [String] {
        headers.filter { $0.0.lowercased() == name }.map { $0.1 }
    }

    func testKeywardsOwnFieldsReplaceTheProvidersWhenKeywardLimitsTheCall() throws {
        try deploy(extra: "rate_limit = { per_minute = 5 }", spend: SpendSettings())
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/limited/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(values("x-ratelimit-limit", response.headers), ["5"])
        XCTAssertEqual(values("x-ratelimit-remaining", response.headers), ["4"])
        XCTAssertEqual(values("x-ratelimit-reset", response.headers), ["60"])
        XCTAssertEqual(values("x-ratelimit-reset-tokens", response.headers), ["3s"], "other provider fields pass through")
    }

    func testTheProvidersFieldsPassThroughWhenKeywardHasNoLimit() throws {
        try deploy(extra: "", spend: nil)
        let (_, token) = try env.session()
        let response = try env.client.call("GET", "/p/limited/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(values("x-ratelimit-limit", response.headers), ["1000000"])
        XCTAssertEqual(values("x-ratelimit-remaining", response.headers), ["999999"])
        XCTAssertEqual(values("x-ratelimit-reset", response.headers), ["7"])
        XCTAssertEqual(values("x-ratelimit-reset-tokens", response.headers), ["3s"])
    }
}
