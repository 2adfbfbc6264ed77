import Foundation
import XCTest

/// `check-config` warns about an allow rule an earlier rule always decides, and still accepts the file.
final class AllowRuleOrderCheckTests: XCTestCase {
    func testCheckConfigWarnsAboutARuleThatCanNeverMatchAndAcceptsTheFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let providers = try folder.write("p.toml", """
            [p]
            base_url = "https://api.example.com"
            secret = "P_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [
              { method = "POST", path = "/v1/*" },
              { method = "POST", path = "/v1/images/generations", cost = 50 },
            ]
            """)
        let environment = ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "P_KEY": "k"]
        let config = try folder.write("keyward.toml", "providers_file = \"p.toml\"\n[store]\nurl = \"sqlite://\(folder.path)/k.db\"\n")
        let result = try KeywardBinary.run(["check-config", "--config", config], environment: environment)
        XCTAssertEqual(result.status, 0, "a warning, not an error: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains(
            "\(providers):7: p.allow[1].path: warning: never matches: allow[0] (POST /v1/*) comes first and matches every path "
                + "this rule matches; the first matching rule decides method, path and cost"), result.stderr)
    }
}
