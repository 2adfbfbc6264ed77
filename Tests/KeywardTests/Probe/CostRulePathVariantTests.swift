import Foundation
import Keyward
import KeywardCrypto
import Store
import XCTest

/// Over HTTP, with `{ GET /v1/models, cost = 5 }` before `{ GET /*, cost = 1 }`: the variants of
/// the costly path an upstream may route to it are refused (`;`, trimmed encoded bytes) or, under
/// `path_case = "insensitive"`, charged its cost; none reaches the provider for 1 credit.
final class CostRulePathVariantTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    static func costly(_ name: String, port: UInt16, extra: String = "") -> String {
        """
        [\(name)]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "CHAT_KEY"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [ { method = "GET", path = "/v1/models", cost = 5 }, { method = "GET", path = "/*" } ]
        \(extra)

        """
    }

    private func deploy(extraProviders: @escaping (UInt16) -> String) throws -> (call: (String) throws -> (status: Int, error: String?), used: () throws -> Int, lastReason: () -> String?) {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 1_000
        env = try TestDeployment(extraProviders: extraProviders, time: clock, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let day = SpendSettings.day(ofSeconds: BudgetTests.start)
        let (store, client, bearer, logSink) = (env.deployment.store, env.client, env.bearer(token), env.deployment.logSink)
        return (
            { path in
                let response = try client.call("GET", path, headers: [bearer])
                return (response.status, response.header("keyward-error"))
            },
            { try store.creditsUsed(scope: CreditSpend.installScope(Hex.encode(device.keyID)), day: day) },
            {
                let lines = logSink.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                return lines.last { $0["event"] as? String == "request" && $0["route"] as? String == "proxy" }?["reason"] as? String
            })
    }

    func testSemicolonAndTrimmedEncodedVariantsOfACostlyPathAreRefused() throws {
        let (call, used, lastReason) = try deploy { port in Self.costly("costly", port: port) }
        XCTAssertEqual(try call("/p/costly/v1/models").status, 200)
        XCTAssertEqual(try used(), 5)
        for (path, reason) in [("/p/costly/v1/models;x", "semicolon"), ("/p/costly/v1/models%3Bx", "semicolon"),
                               ("/p/costly/v1/models%20", "encoded_variant"), ("/p/costly/v1/models%C2%A0", "encoded_variant")] {
            let answer = try call(path)
            XCTAssertEqual(answer.status, 400, path)
            XCTAssertEqual(answer.error, "bad_request", path)
            XCTAssertEqual(lastReason(), reason, path)
        }
        XCTAssertEqual(try used(), 5, "no variant was charged")
        XCTAssertEqual(env.provider.received.count, 1, "no variant reached the provider")
        // Encoded bytes that leave the same rule deciding are data: `/*` takes this one, at 1.
        XCTAssertEqual(try call("/p/costly/v2/a%20b").status, 200)
        XCTAssertEqual(try used(), 6)
    }

    func testUnderCaseInsensitiveEveryCaseOfTheCostlyPathPaysItsCost() throws {
        let (call, used, _) = try deploy { port in Self.costly("nocase", port: port, extra: "path_case = \"insensitive\"") }
        for path in ["/p/nocase/v1/models", "/p/nocase/V1/models", "/p/nocase/v1/MODELS"] {
            XCTAssertEqual(try call(path).status, 200, path)
        }
        XCTAssertEqual(try used(), 15, "each case of the costly path paid its cost")
        XCTAssertEqual(env.provider.received.last?.target, "/v1/MODELS", "forwarded as sent")
        XCTAssertEqual(try call("/p/nocase/v2/other").status, 200)
        XCTAssertEqual(try used(), 16)
    }
}
