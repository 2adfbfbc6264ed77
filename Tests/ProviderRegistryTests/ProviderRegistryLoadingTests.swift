import HTTPFields
import XCTest
@testable import ProviderRegistry

final class ProviderRegistryLoadingTests: XCTestCase {
    func testShippedProvidersFileLoadsClean() throws {
        let registry = try ProviderRegistry.load(path: repositoryRoot() + "/providers.toml")
        XCTAssertEqual(registry.names, ["anthropic", "elevenlabs", "gemini", "maps", "openai", "stripe"])
        XCTAssertEqual(registry.secretNames, [
            "ANTHROPIC_API_KEY", "ELEVENLABS_API_KEY", "GEMINI_API_KEY", "GOOGLE_MAPS_API_KEY", "OPENAI_API_KEY", "STRIPE_RESTRICTED_KEY",
        ])
        let openai = try XCTUnwrap(registry.provider(named: "openai"))
        XCTAssertEqual(openai.origin.baseURL, "https://api.openai.com")
        XCTAssertEqual(openai.origin.hostHeader, "api.openai.com")
        XCTAssertEqual(openai.auth, .header(name: "Authorization", format: HeaderTemplate(prefix: "Bearer ", suffix: "")))
        XCTAssertTrue(openai.allows(method: "POST", segments: ["v1", "chat", "completions"]))
        XCTAssertFalse(openai.allows(method: "GET", segments: ["v1", "chat", "completions"]))
        XCTAssertEqual(openai.rateLimit, RateLimit(perMinute: 20, perDay: 500))

        let anthropic = try XCTUnwrap(registry.provider(named: "anthropic"))
        XCTAssertEqual(anthropic.extraHeaders, [HTTPField(name: "anthropic-version", value: "2023-06-01")])
        XCTAssertEqual(anthropic.maxBodyBytes, 262_144)

        let gemini = try XCTUnwrap(registry.provider(named: "gemini"))
        XCTAssertEqual(gemini.auth, .query(name: "key"))
        XCTAssertTrue(gemini.allows(method: "POST", segments: ["v1beta", "models", "gemini-2.5-flash:generateContent"]))

        XCTAssertEqual(registry.provider(named: "maps")?.auth, .query(name: "key"))
        XCTAssertEqual(registry.provider(named: "stripe")?.auth, .basic(format: HeaderTemplate(prefix: "", suffix: ":")))
        XCTAssertEqual(registry.provider(named: "stripe")?.requireAssertion, true)
        let elevenlabs = try XCTUnwrap(registry.provider(named: "elevenlabs"))
        XCTAssertEqual(elevenlabs.auth, .header(name: "xi-api-key", format: HeaderTemplate(prefix: "", suffix: "")))
        XCTAssertTrue(elevenlabs.allows(method: "POST", segments: ["v1", "text-to-speech", "voice123", "stream"]))
        XCTAssertEqual(elevenlabs.connectTimeoutMs, 5_000)
        XCTAssertEqual(elevenlabs.idleTimeoutMs, 60_000)
    }

    func testDefaults() throws {
        let provider = try XCTUnwrap(registry(providerText()).provider(named: "demo"))
        XCTAssertEqual(provider.maxBodyBytes, 1_048_576)
        XCTAssertFalse(provider.requireAssertion)
        XCTAssertEqual(provider.rateLimit, RateLimit(perMinute: nil, perDay: nil))
        XCTAssertEqual(provider.connectTimeoutMs, 5_000)
        XCTAssertEqual(provider.idleTimeoutMs, 60_000)
    }

    func testSyntaxErrorNamesFileAndLine() {
        let found = configErrors { _ = try registry("[demo]\nbase_url = \"https://a.example\"\nsecret = \n") }
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.file, "p.toml")
        XCTAssertEqual(found.first?.line, 3)
    }

    func testUnknownKeyNamesFileLineAndKey() {
        let found = configErrors { _ = try registry(providerText(extra: "max_body_byte = 5")) }
        XCTAssertEqual(found.map(\.description), ["p.toml:6: demo.max_body_byte: unknown key (did you mean `max_body_bytes`?)"])
    }

    func testUnknownKeyInsideAnInlineTable() {
        let found = configErrors { _ = try registry(providerText(extra: "rate_limit = { per_minute = 5, per_hour = 9 }")) }
        XCTAssertEqual(found.map(\.description), ["p.toml:6: demo.rate_limit.per_hour: unknown key"])
    }

    func testPlainHTTPBaseURLIsRefused() {
        let found = configErrors { _ = try registry(providerText(baseURL: "\"http://api.example.com\"")) }
        XCTAssertEqual(found.map(\.description), ["p.toml:2: demo.base_url: must be an https origin (plain http is allowed only to loopback)"])
    }

    func testPlainHTTPToLoopbackNeedsTheExplicitOptIn() throws {
        let refused = configErrors { _ = try registry(providerText(baseURL: "\"http://127.0.0.1:8081\"")) }
        XCTAssertEqual(refused.map(\.description), ["p.toml:2: demo.base_url: plain http to loopback needs allow_http_loopback = true in this provider"])
        let allowed = try registry(providerText(baseURL: "\"http://127.0.0.1:8081/base/\"", extra: "allow_http_loopback = true"))
        let origin = try XCTUnwrap(allowed.provider(named: "demo")?.origin)
        XCTAssertEqual(origin.baseURL, "http://127.0.0.1:8081/base")
        XCTAssertEqual(origin.hostHeader, "127.0.0.1:8081")
        XCTAssertEqual(allowed.provider(named: "demo")?.upstreamURL(segments: ["v1", "a b"], query: "x=1"), "http://127.0.0.1:8081/base/v1/a%20b?x=1")
    }

    func testMalformedBaseURLsAreRefused() {
        for url in ["\"https://user@api.example.com\"", "\"https://api.example.com/v1?x=1\"", "\"ftp://api.example.com\"",
                    "\"https://api..example.com\"", "\"https://api.example.com:0\"", "\"https://api.example.com//v1\"",
                    "\"https://api.example.com/%2e%2e\"", "\"api.example.com\""] {
            let found = configErrors { _ = try registry(providerText(baseURL: url)) }
            XCTAssertEqual(found.map(\.key), ["demo.base_url"], url)
            XCTAssertEqual(found.first?.line, 2, url)
        }
    }

    func testCRLFInATemplateIsRefused() {
        let auth = "{ type = \"header\", name = \"Authorization\", format = \"Bearer {key}\\r\\nX-Evil: 1\" }"
        let found = configErrors { _ = try registry(providerText(auth: auth)) }
        XCTAssertEqual(found.map(\.description), ["p.toml:4: demo.auth.format: must not contain CR, LF, NUL or other control characters"])
    }

    func testTemplateWithoutOrWithTwoPlaceholdersIsRefused() {
        for (format, message) in [("Bearer", "must contain {key}"), ("{key}{key}", "must contain {key} exactly once")] {
            let found = configErrors { _ = try registry(providerText(auth: "{ type = \"header\", name = \"x-k\", format = \"\(format)\" }")) }
            XCTAssertEqual(found.map(\.description), ["p.toml:4: demo.auth.format: \(message)"])
        }
    }

    func testReservedSecretNameIsRefused() {
        let found = configErrors { _ = try registry(providerText(secret: "\"KEYWARD_SESSION_KEY\"")) }
        XCTAssertEqual(found.map(\.description), [
            "p.toml:3: demo.secret: KEYWARD_SESSION_KEY is reserved for Keyward's own secrets (names starting with KEYWARD_ are reserved)",
        ])
        XCTAssertEqual(configErrors { _ = try registry(providerText(secret: "\"KEYWARD_FUTURE\"")) }.map(\.key), ["demo.secret"])
    }

    func testSecretThatLooksLikeAKeyValueIsRefused() {
        let found = configErrors { _ = try registry(providerText(secret: "\"sk-proj-abc123\"")) }
        XCTAssertEqual(found.map(\.key), ["demo.secret"])
        XCTAssertEqual(found.first?.line, 3)
    }

    func testBadGlobsAndMethodsAreRefusedWithTheirIndex() {
        let allow = """
        [
          { method = "POST", path = "/v1/chat*" },
          { method = "post", path = "/v1/ok" },
          { method = "TRACE", path = "/v1/ok" },
          { method = "GET", path = "v1/no-slash" },
          { method = "GET", path = "/v1//x" },
          { method = "GET", path = "/v1/../x" },
          { method = "GET", path = "/v1/%2e" },
        ]
        """
        let found = configErrors { _ = try registry(providerText(allow: allow)) }
        XCTAssertEqual(found.map(\.description), [
            "p.toml:6: demo.allow[0].path: * must be a whole segment (it matches one or more segments)",
            "p.toml:7: demo.allow[1].method: must be an uppercase HTTP method such as GET or POST",
            "p.toml:8: demo.allow[2].method: TRACE is never proxied",
            "p.toml:9: demo.allow[3].path: must start with /",
            "p.toml:10: demo.allow[4].path: must not contain empty segments (//)",
            "p.toml:11: demo.allow[5].path: must not contain . or .. segments",
            "p.toml:12: demo.allow[6].path: is written decoded: % can never match (encoded % is refused)",
        ])
    }

    func testMethodsMustBeTokensAndUnknownOnesAreWarnedAbout() throws {
        // RFC 9110 §9.1: a method is a token.
        let refused = configErrors { _ = try registry(providerText(allow: "[{ method = \"GE T\", path = \"/a\" }, { method = \"G(E)T\", path = \"/b\" }, { method = \"\", path = \"/c\" }]")) }
        XCTAssertEqual(refused.map(\.key), ["demo.allow[0].method", "demo.allow[1].method", "demo.allow[2].method"])
        // A token that no client sends makes a rule that never matches: loaded, with a warning.
        let allow = """
        [
          { method = "PSOT", path = "/v1/a" },
          { method = "GETT", path = "/v1/b" },
          { method = "PATCH", path = "/v1/c" },
          { method = "FROBNICATE", path = "/v1/d" },
        ]
        """
        let loaded = try registry(providerText(allow: allow))
        XCTAssertEqual(loaded.warnings.map(\.description), [
            "p.toml:6: demo.allow[0].method: warning: PSOT is not an HTTP method this rule can expect (did you mean POST?)",
            "p.toml:7: demo.allow[1].method: warning: GETT is not an HTTP method this rule can expect (did you mean GET?)",
            "p.toml:9: demo.allow[3].method: warning: FROBNICATE is not an HTTP method this rule can expect",
        ])
        XCTAssertEqual(try registry(providerText()).warnings, [])
    }

    func testARuleAnEarlierRuleAlwaysDecidesIsWarnedAbout() throws {
        // Lines: [demo] 1, base_url 2, secret 3, auth 4, allow 5, then one rule a line from 6.
        let allow = """
        [
          { method = "POST", path = "/v1/chat/completions" },
          { method = "POST", path = "/v1/chat/completions", cost = 5 },
          { method = "GET", path = "/v1/*" },
          { method = "GET", path = "/v1/files/*/content", cost = 10 },
          { method = "POST", path = "/v1/files/*/content" },
          { method = "GET", path = "/v2/models" },
          { method = "GET", path = "/*" },
          { method = "GET", path = "/v2/*/x" },
        ]
        """
        let loaded = try registry(providerText(allow: allow))
        XCTAssertEqual(loaded.warnings.map(\.description), [
            "p.toml:7: demo.allow[1].path: warning: never matches: allow[0] (POST /v1/chat/completions) comes first and matches "
                + "every path this rule matches; the first matching rule decides method, path and cost",
            "p.toml:9: demo.allow[3].path: warning: never matches: allow[2] (GET /v1/*) comes first and matches "
                + "every path this rule matches; the first matching rule decides method, path and cost",
            "p.toml:13: demo.allow[7].path: warning: never matches: allow[6] (GET /*) comes first and matches "
                + "every path this rule matches; the first matching rule decides method, path and cost",
        ])
        // Still loaded: a warning, not an error. Another method, or a narrower rule first, is no warning.
        XCTAssertEqual(try XCTUnwrap(loaded.provider(named: "demo")).allow.count, 8)
        let fine = "[{ method = \"GET\", path = \"/v1/files/*/content\", cost = 10 }, { method = \"GET\", path = \"/v1/*\" }]"
        XCTAssertEqual(try registry(providerText(allow: fine)).warnings, [])
    }

    func testCoverageOfPathPatterns() throws {
        func covers(_ a: String, _ b: String) throws -> Bool { try PathPattern.parse(a).covers(PathPattern.parse(b)) }
        XCTAssertTrue(try covers("/v1/a", "/v1/a"))
        XCTAssertFalse(try covers("/v1/a", "/v1/b"))
        XCTAssertTrue(try covers("/v1/*", "/v1/a/b"))
        XCTAssertTrue(try covers("/v1/*", "/v1/*/c"))
        XCTAssertFalse(try covers("/v1/*", "/v1"), "* needs at least one segment")
        XCTAssertFalse(try covers("/v1/*/c", "/v1/*"), "/v1/x/d is matched by the later rule only")
        XCTAssertTrue(try covers("/*/c", "/a/*/c"))
        XCTAssertFalse(try covers("/v1/a", "/v1/*"))
    }

    func testOutOfRangeValuesAreRefused() {
        let extra = "max_body_bytes = 999999999\nconnect_timeout_ms = 1\nrate_limit = { per_minute = 0 }"
        let found = configErrors { _ = try registry(providerText(extra: extra)) }
        XCTAssertEqual(found.map(\.key), ["demo.max_body_bytes", "demo.connect_timeout_ms", "demo.rate_limit.per_minute"])
        XCTAssertEqual(found.map(\.line), [6, 7, 8])
    }

    func testARateLimitWithNoLimitIsRefused() {
        let found = configErrors { _ = try registry(providerText(extra: "rate_limit = { }")) }
        XCTAssertEqual(found.map(\.description), [
            "p.toml:6: demo.rate_limit: names no limit: give per_minute, per_day or both (leave rate_limit out for no limit)",
        ])
    }

    func testADayLimitBelowTheMinuteLimitIsWarnedAbout() throws {
        let loaded = try registry(providerText(extra: "rate_limit = { per_minute = 10, per_day = 5 }"))
        XCTAssertEqual(loaded.warnings.map(\.description), [
            "p.toml:6: demo.rate_limit.per_day: warning: per_day (5) is below per_minute (10), so the minute limit is never reached; "
                + "raise per_day or lower per_minute",
        ])
        // Still loaded as written: a warning, not an error.
        XCTAssertEqual(loaded.provider(named: "demo")?.rateLimit, RateLimit(perMinute: 10, perDay: 5))
        XCTAssertEqual(try registry(providerText(extra: "rate_limit = { per_minute = 10, per_day = 10 }")).warnings, [])
        XCTAssertEqual(try registry(providerText(extra: "rate_limit = { per_day = 5 }")).warnings, [])
    }

    func testExtraHeadersMayNotCarryCredentialsOrFraming() {
        let extra = "headers = { \"x-api-key\" = \"sk-literal\", \"Transfer-Encoding\" = \"chunked\", \"X-Ok\" = \"a\\nb\" }"
        let found = configErrors { _ = try registry(providerText(extra: extra)) }
        XCTAssertEqual(found.map(\.key).sorted(), ["demo.headers.Transfer-Encoding", "demo.headers.X-Ok", "demo.headers.x-api-key"])
        XCTAssertTrue(found.allSatisfy { $0.line == 6 })
    }

    func testAuthTypeMustBeKnownAndFieldsMustFitIt() {
        let found = configErrors {
            _ = try registry(providerText(auth: "{ type = \"query\", name = \"key\", format = \"{key}\" }")
                + "\n" + providerText(name: "b", auth: "{ type = \"bearer\" }"))
        }
        XCTAssertEqual(found.map(\.description), [
            "p.toml:4: demo.auth.format: is not used by query auth (the key is sent as is, percent-encoded)",
            "p.toml:10: b.auth.type: must be \"header\", \"query\" or \"basic\"",
        ])
    }

    func testProviderNameMustBeARouteSegment() {
        let found = configErrors { _ = try registry(providerText(name: "\"Open AI\"")) }
        XCTAssertEqual(found.map(\.key), ["\"Open AI\""])
        XCTAssertEqual(found.first?.line, 1)
    }

    func testErrorsOfSeveralProvidersAndUnknownKeysAreReportedTogether() {
        let text = providerText(baseURL: "\"http://x.example\"", extra: "colour = 1") + "\n" + providerText(name: "b", secret: "\"KEYWARD_SESSION_KEY\"")
        let found = configErrors { _ = try registry(text) }
        XCTAssertEqual(found.map(\.key), ["demo.base_url", "demo.colour", "b.secret"])
    }

    func testEmptyFileHasNoProviders() {
        XCTAssertEqual(configErrors { _ = try registry("") }.map(\.description), ["p.toml:1: no providers: add a [name] table per provider"])
    }

    func testArrayOfTablesSyntaxIsLocatedToo() {
        let text = """
        [demo]
        base_url = "https://api.example.com"
        secret = "DEMO_KEY"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }

        [[demo.allow]]
        method = "GET"
        path = "/v1/models"

        [[demo.allow]]
        method = "GET"
        path = "/v1/models/*x"
        """
        XCTAssertEqual(configErrors { _ = try registry(text) }.map(\.description), [
            "p.toml:12: demo.allow[1].path: * must be a whole segment (it matches one or more segments)",
        ])
    }
}
