import XCTest
@testable import ProviderRegistry
import TOMLDecoding

/// A cost rule is not escaped by a variant of its path: `;` refused by default, `path_case =
/// "insensitive"` for upstreams that ignore case, and encoded bytes that, dropped, would make a
/// path another rule decides refused (`PathPolicy`).
final class PathPolicyTests: XCTestCase {
    static let rules = """
        [{ method = "GET", path = "/v1/models", cost = 5 }, { method = "GET", path = "/v1/files/*", cost = 2 }, { method = "GET", path = "/*" }]
        """

    private func provider(_ extra: String = "") throws -> Provider {
        try XCTUnwrap(try registry(providerText(allow: Self.rules, extra: extra)).providers["demo"])
    }

    /// What the proxy does with `rawPath`: the refusal's slug, or the cost it charges.
    private func outcome(_ provider: Provider, _ rawPath: String, method: String = "GET") -> String {
        do {
            let segments = try ProxyPath.canonicalSegments(rawPath: rawPath)
            try provider.checkPathForm(rawPath: rawPath, segments: segments, method: method)
            guard provider.allows(method: method, segments: segments) else { return "forbidden" }
            return "cost \(provider.cost(method: method, segments: segments))"
        } catch {
            return error.reason
        }
    }

    func testSemicolonsAreRefusedAndCaseIsExactByDefault() throws {
        let demo = try provider()
        XCTAssertEqual(demo.pathPolicy, PathPolicy(caseInsensitive: false, allowsSemicolons: false))
        XCTAssertEqual(outcome(demo, "/v1/models"), "cost 5")
        XCTAssertEqual(outcome(demo, "/v1/models;x"), "semicolon")
        XCTAssertEqual(outcome(demo, "/v1/models%3Bx"), "semicolon", "a decoded ; goes upstream as ; too")
        XCTAssertEqual(outcome(demo, "/v1;a/models"), "semicolon")
        XCTAssertEqual(outcome(demo, "/v1/files/a;b"), "semicolon")
        // Case-sensitive by default, as RFC 3986 compares paths: another path, matched as such.
        XCTAssertEqual(outcome(demo, "/V1/models"), "cost 1")
    }

    func testUnderCaseInsensitiveEveryCaseOfAPathPaysItsRule() throws {
        let demo = try provider("path_case = \"insensitive\"")
        XCTAssertTrue(demo.pathPolicy.caseInsensitive)
        for path in ["/v1/models", "/V1/models", "/v1/MODELS", "/V1/Models"] {
            XCTAssertEqual(outcome(demo, path), "cost 5", path)
        }
        XCTAssertEqual(outcome(demo, "/V1/FILES/Report.PDF"), "cost 2")
        // Characters whose case partner is ASCII, which Java and .NET servers fold to it.
        for path in ["/v1/model%C5%BF", "/v1/MODEL%C5%BF"] {
            XCTAssertEqual(outcome(demo, path), "cost 5", path)
        }
        XCTAssertEqual(outcome(demo, "/v1/f%C4%B1les/report"), "cost 2", "dotless i")
        // The path still goes upstream as sent.
        let segments = try ProxyPath.canonicalSegments(rawPath: "/V1/Models")
        XCTAssertEqual(demo.upstreamURL(segments: segments, query: nil), "https://api.example.com/V1/Models")
    }

    func testSemicolonsAllowedGoThroughAsData() throws {
        let demo = try provider("path_semicolons = \"allow\"")
        XCTAssertEqual(outcome(demo, "/v1/files/-122.42,37.78;-77.03,38.91"), "cost 2")
        XCTAssertEqual(outcome(demo, "/v1/models;x"), "cost 1")
        XCTAssertEqual(outcome(demo, "/;x"), "empty_segment", "a segment that is only parameters stays refused")
        XCTAssertEqual(outcome(demo, "/..;x"), "dot_segment")
    }

    func testEncodedBytesThatDroppedMakeAPathAnotherRuleDecidesAreRefused() throws {
        let demo = try provider()
        XCTAssertEqual(outcome(demo, "/v1/models%20"), "encoded_variant")
        XCTAssertEqual(outcome(demo, "/v1/mod%20els"), "encoded_variant")
        XCTAssertEqual(outcome(demo, "/v1/models%C2%A0"), "encoded_variant", "a no-break space too")
        XCTAssertEqual(outcome(demo, "/v1%20/models"), "encoded_variant", "in any segment")
        XCTAssertEqual(outcome(demo, "/v1/files/%20"), "encoded_variant", "dropped, it is /v1/files/, which no rule allows")
        // Dropped, they leave a path the same rule decides: nothing to gain, so they pass.
        XCTAssertEqual(outcome(demo, "/v1/files/a%20b.txt"), "cost 2")
        XCTAssertEqual(outcome(demo, "/v1/files/%E2%82%AC"), "cost 2", "a whole segment of UTF-8 is data")
        XCTAssertEqual(outcome(demo, "/other%20path"), "cost 1")
        // Encoded unreserved bytes decode to the very path: matched as it.
        XCTAssertEqual(outcome(demo, "/v1/%6Dodels"), "cost 5")
        // A method no rule allows is refused whatever the path.
        XCTAssertEqual(outcome(demo, "/v1/models%20", method: "POST"), "forbidden")
    }

    func testPathPolicyValuesAndSemicolonRulesAreCheckedWithFileLineAndKey() {
        let found = configErrors { _ = try registry(providerText(extra: "path_case = \"Insensitive\"\npath_semicolons = \"keep\"")) }
        XCTAssertEqual(found.map(\.description), [
            "p.toml:6: demo.path_case: must be \"sensitive\" (the default) or \"insensitive\" (the upstream routes paths whatever their case)",
            "p.toml:7: demo.path_semicolons: must be \"refuse\" (the default: a path segment with ; is refused) or \"allow\"",
        ])
        let semicolonRule = configErrors { _ = try registry(providerText(allow: "[{ method = \"GET\", path = \"/v1/a;b\" }]")) }
        XCTAssertEqual(semicolonRule.map(\.description), [
            "p.toml:5: demo.allow[0].path: contains ;, and every request path with ; is refused under path_semicolons = \"refuse\" (the default): set path_semicolons = \"allow\" if this provider's paths keep ;",
        ])
        XCTAssertNoThrow(try registry(providerText(allow: "[{ method = \"GET\", path = \"/v1/a;b\" }]", extra: "path_semicolons = \"allow\"")))
    }

    func testUnderCaseInsensitiveARuleDifferingOnlyInCaseIsWarnedAsShadowed() throws {
        let allow = "[{ method = \"GET\", path = \"/v1/models\" }, { method = \"GET\", path = \"/V1/Models\", cost = 9 }]"
        XCTAssertTrue(try registry(providerText(allow: allow)).warnings.isEmpty)
        let warned = try registry(providerText(allow: allow, extra: "path_case = \"insensitive\"")).warnings
        XCTAssertEqual(warned.map(\.key), ["demo.allow[1].path"])
    }
}
