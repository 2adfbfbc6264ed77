import Foundation
import Keyward
import XCTest

/// `check-config` and `serve` agree on a provider's `path_case` and `path_semicolons`: the same
/// bad value is refused by both with file, line and key; the good values pass `check-config`.
final class PathPolicyConfigAgreementTests: XCTestCase {
    func testCheckConfigAndServeRefuseTheSameBadPathPolicyWithFileLineAndKey() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let providers = { (extra: String) in
            try folder.write("p.toml", """
                [p]
                base_url = "https://api.example.com"
                secret = "P_KEY"
                auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
                allow = [ { method = "GET", path = "/v1/*" } ]
                \(extra)
                """)
        }
        let config = try folder.write("keyward.toml", """
            providers_file = "p.toml"
            [listen]
            proxy = "127.0.0.1:\(freeLoopbackPort())"
            admin = "127.0.0.1:\(freeLoopbackPort())"
            [store]
            url = "sqlite://\(folder.path)/k.db"
            """)
        let environment = ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "P_KEY": "k"]
        let cases: [(extra: String, expected: String)] = [
            ("path_case = \"Insensitive\"", "p.toml:6: p.path_case: must be \"sensitive\""),
            ("path_semicolons = \"keep\"", "p.toml:6: p.path_semicolons: must be \"refuse\""),
        ]
        for (extra, expected) in cases {
            _ = try providers(extra)
            let check = try KeywardBinary.run(["check-config", "--config", config], environment: environment)
            XCTAssertEqual(check.status, 1, "\(extra): check-config said \(check.stdout)")
            XCTAssertTrue(check.stderr.contains(expected), "\(extra): expected \(expected) in \(check.stderr)")
            let serve = try KeywardBinary.run(["serve", "--config", config], environment: environment, timeout: 30)
            XCTAssertEqual(serve.status, 1, "\(extra): serve")
            XCTAssertTrue(serve.stderr.contains(expected), "\(extra): expected \(expected) in \(serve.stderr)")
        }
        _ = try providers("path_case = \"insensitive\"\npath_semicolons = \"allow\"")
        let good = try KeywardBinary.run(["check-config", "--config", config], environment: environment)
        XCTAssertEqual(good.status, 0, good.stderr)
    }
}
