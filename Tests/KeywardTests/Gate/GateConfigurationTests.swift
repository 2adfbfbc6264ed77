import Foundation
import ProviderRegistry
import XCTest
@testable import Keyward
import TOMLDecoding

/// `[gate] mode` in keyward.toml and `require_attested` in providers.toml: validated like every
/// other key, and `check-config` warns of a gate that does not enforce.
final class GateConfigurationTests: XCTestCase {
    private func errors(_ text: String) -> [String] {
        do {
            _ = try KeywardConfiguration.parse(text: text, path: "k.toml")
            XCTFail("expected errors")
        } catch {
            return error.errors.map(\.description)
        }
        return []
    }

    func testGateModeDecodesAndDefaultsToEnforce() throws {
        XCTAssertEqual(try KeywardConfiguration.parse(text: "", path: "k.toml").gateMode, .enforce)
        for mode in GateMode.allCases {
            XCTAssertEqual(try KeywardConfiguration.parse(text: "[gate]\nmode = \"\(mode.rawValue)\"\n", path: "k.toml").gateMode, mode)
        }
        XCTAssertNil(GateMode.enforce.warning)
        XCTAssertEqual(ServiceAssembly.settings(from: try KeywardConfiguration.parse(text: "[gate]\nmode = \"off\"\n", path: "k.toml")).gateMode, .off)
        XCTAssertEqual(
            try KeywardConfiguration.parse(text: "", path: "k.toml")
                .settingsNeedingRestart(toBecome: try KeywardConfiguration.parse(text: "[gate]\nmode = \"monitor\"\n", path: "k.toml")),
            ["gate.mode"])
    }

    func testBadGateModeNamesFileLineAndKey() {
        XCTAssertEqual(errors("[store]\npool_size = 4\n[gate]\nmode = \"audit\"\n"), [
            "k.toml:4: gate.mode: must be \"enforce\", \"monitor\" or \"off\"",
        ])
        XCTAssertEqual(errors("[gate]\nmode = true\n"), ["k.toml:2: gate.mode: expected a string, found a boolean"])
        XCTAssertEqual(errors("[gate]\nmodes = \"off\"\n").first?.hasPrefix("k.toml:2: gate.modes"), true)
    }

    func testBadRequireAttestedNamesFileLineAndKey() throws {
        let base = """
            [vault]
            base_url = "https://api.example.com"
            secret = "VAULT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/*" } ]

            """
        let registry = try ProviderRegistry.parse(text: base + "require_attested = true\n", path: "p.toml")
        XCTAssertEqual(registry.provider(named: "vault")?.requireAttested, true)
        XCTAssertEqual(try ProviderRegistry.parse(text: base, path: "p.toml").provider(named: "vault")?.requireAttested, false)
        XCTAssertThrowsError(try ProviderRegistry.parse(text: base + "require_attested = \"yes\"\n", path: "p.toml")) { error in
            XCTAssertEqual(String(describing: error), "p.toml:6: vault.require_attested: expected a boolean (true or false), found a string")
        }
    }

    func testCheckConfigWarnsWhenTheGateDoesNotEnforce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        _ = try folder.write("p.toml", """
            [p]
            base_url = "https://api.example.com"
            secret = "P_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/*" } ]
            """)
        let environment = ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "P_KEY": "k"]
        for mode in ["enforce", "monitor", "off"] {
            let config = try folder.write("keyward.toml", "providers_file = \"p.toml\"\n[store]\nurl = \"sqlite://\(folder.path)/k.db\"\n[gate]\nmode = \"\(mode)\"\n")
            let result = try KeywardBinary.run(["check-config", "--config", config], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
            if mode == "enforce" {
                XCTAssertFalse(result.stderr.contains("gate.mode"), result.stderr)
            } else {
                XCTAssertTrue(result.stderr.contains("\(config): warning: gate.mode: [gate] mode = \"\(mode)\""), result.stderr)
            }
        }
        let broken = try folder.write("keyward.toml", "providers_file = \"p.toml\"\n[gate]\nmode = \"Monitor\"\n")
        let refused = try KeywardBinary.run(["check-config", "--config", broken], environment: environment)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("keyward.toml:3: gate.mode: must be \"enforce\", \"monitor\" or \"off\""), refused.stderr)
    }
}
