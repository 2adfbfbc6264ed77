import XCTest
@testable import ProviderRegistry
import TOMLDecoding

final class RequestRewriteTests: XCTestCase {
    private let key = "sk-test-123"

    private func provider(_ name: String) throws -> Provider {
        try XCTUnwrap(ProviderRegistry.load(path: repositoryRoot() + "/providers.toml").provider(named: name))
    }

    private func names(_ headers: [(name: String, value: String)]) -> [String] { headers.map(\.name) }

    func testClientCredentialsHopByHopAndForwardingHeadersAreDroppedInAnyCase() throws {
        let openai = try provider("openai")
        let credential = try ProviderCredential(provider: openai, secretValue: key)
        let client: [(name: String, value: String)] = [
            ("Content-Type", "application/json"),
            ("authorization", "Bearer session-token"),
            ("PROXY-AUTHORIZATION", "Basic x"),
            ("Cookie", "a=b"),
            ("Forwarded", "for=1.2.3.4"),
            ("X-Forwarded-For", "1.2.3.4"),
            ("x-forwarded-proto", "https"),
            ("X-Real-IP", "1.2.3.4"),
            ("CF-Connecting-IP", "1.2.3.4"),
            ("True-Client-IP", "1.2.3.4"),
            ("Via", "1.1 front"),
            ("X-Keyward-Assertion", "abc"),
            ("x-keyward-timestamp", "1"),
            ("X-Api-Key", "client-key"),
            ("Api-Key", "client-key"),
            ("X-GOOG-API-KEY", "client-key"),
            ("Xi-Api-Key", "client-key"),
            ("Connection", "keep-alive, X-Custom-Hop"),
            ("Keep-Alive", "timeout=5"),
            ("X-Custom-Hop", "1"),
            ("TE", "trailers"),
            ("Transfer-Encoding", "chunked"),
            ("Upgrade", "h2c"),
            ("Proxy-Connection", "keep-alive"),
            ("Trailer", "X"),
            ("Host", "keyward.example"),
            ("Content-Length", "12"),
            ("Expect", "100-continue"),
            ("Cookie2", "$Version=1"),
            ("X-Auth-Token", "client-token"),
            ("X-Amz-Security-Token", "client-token"),
            ("X-Original-URL", "/admin"),
            ("x-rewrite-url", "/admin"),
            ("Ocp-Apim-Subscription-Key", "client-key"),
            ("X-Access-Token", "client-token"),
            ("Token", "client-token"),
            ("X-Session-Token", "client-token"),
            ("X-Authorization", "client-token"),
            ("X-Originating-IP", "1.2.3.4"),
            ("X-Remote-IP", "1.2.3.4"),
            ("X-Remote-Addr", "1.2.3.4"),
            ("X-Host", "internal.example"),
            ("X-Original-Host", "internal.example"),
            ("OpenAI-Organization", "org-someone-else"),
            ("OpenAI-Project", "proj-someone-else"),
            ("X-Goog-User-Project", "another-project"),
            ("X-Goog-AuthUser", "1"),
            ("Stripe-Account", "acct_someone_else"),
            ("Stripe-Context", "ctx_someone_else"),
            ("X-Android-Package", "com.example.app"),
            ("X-Android-Cert", "0123456789abcdef0123456789abcdef01234567"),
            ("X-Ios-Bundle-Identifier", "com.example.app"),
            ("Private-Token", "client-token"),
            ("apikey", "client-key"),
            ("X-Apikey", "client-key"),
            ("Api-Token", "client-token"),
            ("X-Api-Token", "client-token"),
            ("X-Token", "client-token"),
            ("X-Api-Secret", "client-secret"),
            ("X-ProxyUser-Ip", "1.2.3.4"),
            ("X-Original-Forwarded-For", "1.2.3.4"),
            ("X-Envoy-External-Address", "1.2.3.4"),
            ("X-Envoy-Original-Path", "/admin"),
            ("X-Original-Method", "DELETE"),
            ("X-Override-URL", "/admin"),
            ("X_Api_Key", "client-key"),
            ("Content_Length", "50"),
            ("X-Forwarded_For", "6.6.6.6"),
            ("Transfer_Encoding", "chunked"),
            ("Accept", "text/event-stream"),
            ("OpenAI-Beta", "assistants=v2"),
        ]
        let upstream = RequestRewrite.upstreamHeaders(client: client, provider: openai, credential: credential)
        XCTAssertEqual(upstream.map { "\($0.name): \($0.value)" }, [
            "Content-Type: application/json",
            "Accept: text/event-stream",
            "OpenAI-Beta: assistants=v2",
            "Host: api.openai.com",
            "Authorization: Bearer sk-test-123",
        ])
    }

    func testAnUncompressedAnswerReplacesEveryAcceptEncodingOfTheClient() throws {
        let openai = try provider("openai")
        let credential = try ProviderCredential(provider: openai, secretValue: key)
        let client = [("Accept-Encoding", "gzip, br"), ("content-type", "application/json"), ("ACCEPT-ENCODING", "zstd")]
        let metered = RequestRewrite.upstreamHeaders(client: client, provider: openai, credential: credential, uncompressedAnswer: true)
        XCTAssertEqual(metered.map { "\($0.name): \($0.value)" }, [
            "content-type: application/json",
            "Host: api.openai.com",
            "Authorization: Bearer sk-test-123",
            "Accept-Encoding: identity",
        ])
        let plain = RequestRewrite.upstreamHeaders(client: client, provider: openai, credential: credential)
        XCTAssertEqual(plain.filter { $0.name.lowercased() == "accept-encoding" }.map(\.value), ["gzip, br", "zstd"])
    }

    func testProviderAuthHeaderAndFixedHeadersReplaceTheClientsCopies() throws {
        let anthropic = try provider("anthropic")
        let credential = try ProviderCredential(provider: anthropic, secretValue: key)
        let upstream = RequestRewrite.upstreamHeaders(
            client: [("anthropic-version", "1999-01-01"), ("X-API-KEY", "mine"), ("content-type", "application/json")],
            provider: anthropic, credential: credential)
        XCTAssertEqual(upstream.map { "\($0.name): \($0.value)" }, [
            "content-type: application/json",
            "Host: api.anthropic.com",
            "anthropic-version: 2023-06-01",
            "x-api-key: sk-test-123",
        ])
        XCTAssertEqual(upstream.filter { $0.value.contains(key) }.count, 1)
    }

    func testAProvidersDropClientHeadersAreNeverForwardedInAnyCase() throws {
        let registry = try ProviderRegistry.parse(
            text: providerText(extra: "drop_client_headers = [\"Anthropic-Beta\", \"x-feature\"]"), path: "p.toml")
        let demo = try XCTUnwrap(registry.provider(named: "demo"))
        let credential = try ProviderCredential(provider: demo, secretValue: key)
        let upstream = RequestRewrite.upstreamHeaders(
            client: [("anthropic-beta", "prompt-caching-2024-07-31"), ("X-FEATURE", "on"), ("Accept", "*/*")],
            provider: demo, credential: credential)
        XCTAssertEqual(upstream.map { "\($0.name): \($0.value)" }, ["Accept: */*", "Host: api.example.com", "Authorization: Bearer sk-test-123"])
    }

    func testADropClientHeadersNameThatIsNotATokenIsRefusedAtItsKey() {
        XCTAssertThrowsError(try ProviderRegistry.parse(
            text: providerText(extra: "drop_client_headers = [\"ok\", \"bad name\"]"), path: "p.toml")) { error in
            XCTAssertTrue("\(error)".contains("p.toml:6: demo.drop_client_headers[1]"), "\(error)")
            XCTAssertTrue("\(error)".contains("HTTP token"), "\(error)")
        }
    }

    func testCustomAuthHeaderNameIsDroppedFromTheClient() throws {
        let registry = try ProviderRegistry.parse(text: providerText(auth: "{ type = \"header\", name = \"X-Service-Token\", format = \"t={key}\" }"), path: "p.toml")
        let demo = try XCTUnwrap(registry.provider(named: "demo"))
        let credential = try ProviderCredential(provider: demo, secretValue: key)
        let upstream = RequestRewrite.upstreamHeaders(client: [("x-service-token", "forged")], provider: demo, credential: credential)
        XCTAssertEqual(upstream.map { "\($0.name): \($0.value)" }, ["Host: api.example.com", "X-Service-Token: t=sk-test-123"])
    }

    func testBasicAuthIsBase64OfTheFormat() throws {
        let stripe = try provider("stripe")
        let credential = try ProviderCredential(provider: stripe, secretValue: "rk_test_abc")
        let upstream = RequestRewrite.upstreamHeaders(client: [("Authorization", "Bearer session")], provider: stripe, credential: credential)
        // base64("rk_test_abc:") — RFC 7617 §2
        XCTAssertEqual(upstream.map { "\($0.name): \($0.value)" }, ["Host: api.stripe.com", "Authorization: Basic cmtfdGVzdF9hYmM6"])
    }

    func testQueryKeyProviderKeepsOnlyOurKeyWhateverTheClientsCaseOrEncoding() throws {
        let gemini = try provider("gemini")
        let credential = try ProviderCredential(provider: gemini, secretValue: "AIza&x=1")
        XCTAssertEqual(RequestRewrite.upstreamQuery("key=c1&KEY=c2&k%65y=c3&key=", provider: gemini, credential: credential), "key=AIza%26x%3D1")
        XCTAssertEqual(RequestRewrite.upstreamQuery("alt=sse&key=c1&b=2&&Key&%4B%45%59=z", provider: gemini, credential: credential),
                       "alt=sse&b=2&key=AIza%26x%3D1")
        XCTAssertEqual(RequestRewrite.upstreamQuery(nil, provider: gemini, credential: credential), "key=AIza%26x%3D1")
        XCTAssertEqual(RequestRewrite.upstreamQuery("", provider: gemini, credential: credential), "key=AIza%26x%3D1")
        // Not the key: double-encoded names are not decoded twice, other names that contain "key" stay.
        XCTAssertEqual(RequestRewrite.upstreamQuery("k%2565y=1&keys=2&monkey=3", provider: gemini, credential: credential),
                       "k%2565y=1&keys=2&monkey=3&key=AIza%26x%3D1")
    }

    func testSemicolonsGoToAQueryKeyProviderEncoded() throws {
        // An upstream that also splits parameters on `;` would otherwise see the client's `key` first.
        let gemini = try provider("gemini")
        let credential = try ProviderCredential(provider: gemini, secretValue: "AIza")
        XCTAssertEqual(RequestRewrite.upstreamQuery("address=y;key=c4", provider: gemini, credential: credential),
                       "address=y%3Bkey=c4&key=AIza")
        XCTAssertEqual(RequestRewrite.upstreamQuery(";key=c4;", provider: gemini, credential: credential), "%3Bkey=c4%3B&key=AIza")
        // Header-key providers get the query as sent.
        let openai = try provider("openai")
        XCTAssertEqual(RequestRewrite.upstreamQuery("a=1;b=2", provider: openai, credential: try ProviderCredential(provider: openai, secretValue: "sk")),
                       "a=1;b=2")
    }

    /// Found by fuzz/FuzzProxyPath.swift (minimized: `Key&\u{734}`): `&` or `=` followed by a combining
    /// mark is one Character, so splitting the query by Character missed the boundary and the client's
    /// key reached the upstream next to ours. The query is split on bytes, as the upstream splits it.
    func testClientKeyNextToACombiningMarkIsStillRemoved() throws {
        let gemini = try provider("gemini")
        let credential = try ProviderCredential(provider: gemini, secretValue: "AIza&x=1")
        XCTAssertEqual(RequestRewrite.upstreamQuery("Key&\u{734}", provider: gemini, credential: credential),
                       "\u{734}&key=AIza%26x%3D1")
        XCTAssertEqual(RequestRewrite.upstreamQuery("a=1&\u{301}&key=c1", provider: gemini, credential: credential),
                       "a=1&\u{301}&key=AIza%26x%3D1")
        // U+0600 is a prepended mark: it joins the `&` after it into one Character.
        XCTAssertEqual(RequestRewrite.upstreamQuery("x=1\u{600}&key=c1", provider: gemini, credential: credential),
                       "x=1\u{600}&key=AIza%26x%3D1")
        XCTAssertEqual(RequestRewrite.upstreamQuery("key=\u{301}c1&b=2", provider: gemini, credential: credential),
                       "b=2&key=AIza%26x%3D1")
    }

    func testQueryOfAHeaderProviderPassesUnchanged() throws {
        let openai = try provider("openai")
        let credential = try ProviderCredential(provider: openai, secretValue: key)
        XCTAssertEqual(RequestRewrite.upstreamQuery("a=1&key=2", provider: openai, credential: credential), "a=1&key=2")
        XCTAssertNil(RequestRewrite.upstreamQuery("", provider: openai, credential: credential))
        XCTAssertNil(RequestRewrite.upstreamQuery(nil, provider: openai, credential: credential))
        XCTAssertEqual(openai.upstreamURL(segments: ["v1", "chat", "completions"], query: nil), "https://api.openai.com/v1/chat/completions")
    }

    func testSecretValuesWithControlCharactersAreRefused() throws {
        let openai = try provider("openai")
        for (value, reason) in [("", "secret_empty"), ("sk\r\nX-Evil: 1", "secret_control_character"), ("sk\n", "secret_control_character"),
                                ("sk\u{0}", "secret_control_character"), (String(repeating: "k", count: 9000), "secret_too_long")] {
            XCTAssertThrowsError(try ProviderCredential(provider: openai, secretValue: value)) { error in
                XCTAssertEqual((error as? SecretValueError)?.reason, reason)
                XCTAssertFalse("\(error)".contains("sk"))
            }
        }
        XCTAssertFalse("\(try ProviderCredential(provider: openai, secretValue: key))".contains(key))
    }
}

final class ResponseRewriteTests: XCTestCase {
    func testCookiesHopByHopCORSAndEchoedKeysAreDropped() throws {
        let registry = try ProviderRegistry.load(path: repositoryRoot() + "/providers.toml")
        let gemini = try XCTUnwrap(registry.provider(named: "gemini"))
        let credential = try ProviderCredential(provider: gemini, secretValue: "AIza/secret")
        let upstream: [(name: String, value: String)] = [
            ("Content-Type", "text/event-stream"),
            ("Set-Cookie", "sid=1"),
            ("set-cookie2", "x"),
            ("Connection", "close, X-Hop"),
            ("X-Hop", "1"),
            ("Keep-Alive", "timeout=5"),
            ("Access-Control-Allow-Origin", "*"),
            ("X-Loud", "aiza/SECRET"),
            ("X-AIza/secret-Seen", "1"),
            ("access-control-allow-credentials", "true"),
            ("Alt-Svc", "h3=\":443\""),
            ("Keyward-Error", "session_invalid"),
            ("X-Debug-Url", "https://generativelanguage.googleapis.com/v1?key=AIza%2Fsecret"),
            ("X-Echo", "AIza/secret"),
            ("Content-Length", "42"),
            ("x-request-id", "r1"),
        ]
        let client = ResponseRewrite.clientHeaders(upstream, credential: credential)
        XCTAssertEqual(client.map(\.name), ["Content-Type", "Content-Length", "x-request-id"])
    }

    func testOverEscapedAndBase64EchoesOfAHeaderProvidersKeyAreDropped() throws {
        let registry = try ProviderRegistry.load(path: repositoryRoot() + "/providers.toml")
        let openai = try XCTUnwrap(registry.provider(named: "openai"))
        let credential = try ProviderCredential(provider: openai, secretValue: "sk-SUPERSECRET-123")
        let upstream: [(name: String, value: String)] = [
            ("X-Upper", "sk%2DSUPERSECRET%2D123"),            // unreserved bytes escaped anyway
            ("X-Lower", "sk%2dSUPERSECRET%2d123"),
            ("X-All", "%73%6B%2D%53UPERSECRET-123"),
            ("X-Basic", "Basic c2stU1VQRVJTRUNSRVQtMTIzOg=="), // base64("sk-SUPERSECRET-123:")
            ("X-Bare", "c2stU1VQRVJTRUNSRVQtMTIzOg"),
            ("X-Plain", "c2stU1VQRVJTRUNSRVQtMTIz"),            // base64 of the key itself
            ("X-Name-%73k-SUPERSECRET-123", "1"),
            ("X-Escaped-Elsewhere", "a%20b"),
            ("X-Request-Id", "r1"),
        ]
        let client = ResponseRewrite.clientHeaders(upstream, credential: credential)
        XCTAssertEqual(client.map(\.name), ["X-Escaped-Elsewhere", "X-Request-Id"])
    }

    func testContentLengthBesideATransferCodingIsNotForwarded() throws {
        let registry = try ProviderRegistry.load(path: repositoryRoot() + "/providers.toml")
        let credential = try ProviderCredential(provider: try XCTUnwrap(registry.provider(named: "openai")), secretValue: "sk-test-123")
        let upstream: [(name: String, value: String)] = [
            ("Content-Length", "5"), ("Transfer-Encoding", "chunked"), ("Content-Type", "text/plain"),
        ]
        // RFC 9112 §6.3: the coding frames the body; the length would promise bytes that never come.
        XCTAssertEqual(ResponseRewrite.clientHeaders(upstream, credential: credential).map(\.name), ["Content-Type"])
        XCTAssertEqual(
            ResponseRewrite.clientHeaders([("Content-Length", "5")], credential: credential).map(\.name), ["Content-Length"])
    }

    func testBasicCredentialEchoIsDropped() throws {
        let registry = try ProviderRegistry.load(path: repositoryRoot() + "/providers.toml")
        let stripe = try XCTUnwrap(registry.provider(named: "stripe"))
        let credential = try ProviderCredential(provider: stripe, secretValue: "rk_test_abc")
        let client = ResponseRewrite.clientHeaders([("X-Seen-Auth", "Basic cmtfdGVzdF9hYmM6"), ("Request-Id", "req_1")], credential: credential)
        XCTAssertEqual(client.map(\.name), ["Request-Id"])
    }

    func testDeclaredContentLengthIsTheOneWellFormedField() {
        XCTAssertEqual(ResponseRewrite.declaredContentLength([("Content-Type", "a/b"), ("content-LENGTH", "10")]), 10)
        XCTAssertEqual(ResponseRewrite.declaredContentLength([("Content-Length", "0")]), 0)
        XCTAssertEqual(ResponseRewrite.declaredContentLength([("Content-Length", "999999999999999")]), 999_999_999_999_999)
        XCTAssertNil(ResponseRewrite.declaredContentLength([("Content-Type", "a/b")]))
        for malformed in ["", "+5", "-1", "1 0", " 10", "0x10", "١٠", "1000000000000000", "10,10"] {
            XCTAssertNil(ResponseRewrite.declaredContentLength([("Content-Length", malformed)]), malformed)
        }
        // Two fields, even equal ones, leave the length to the careful (streaming) path.
        XCTAssertNil(ResponseRewrite.declaredContentLength([("Content-Length", "10"), ("Content-Length", "10")]))
    }
}

final class AssertionClientDataTests: XCTestCase {
    func testFourLinesMethodPathAndQueryAsSentBodyHashTimestamp() {
        let hash = [UInt8](repeating: 0xFB, count: 32)
        let bytes = AssertionClientData.bytes(method: "POST", path: "/p/openai/v1/chat%2Dx", query: "a=1&b=%20", bodySHA256: hash, timestamp: "1700000000")
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self),
                       "POST\n/p/openai/v1/chat%2Dx?a=1&b=%20\n-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_s\n1700000000")
    }

    func testEmptyQueryAddsNoQuestionMarkAndTheHashClosureIsUsed() {
        var hashed: [UInt8]?
        let bytes = AssertionClientData.bytes(method: "GET", path: "/p/maps/x", query: "", body: [1, 2], timestamp: "5") { body in
            hashed = body
            return [0, 0, 0]
        }
        XCTAssertEqual(hashed, [1, 2])
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "GET\n/p/maps/x\nAAAA\n5")
    }
}

final class ProviderCredentialsTests: XCTestCase {
    func testMissingAndUnusableSecretsPointAtTheSecretLineWithoutTheirValues() throws {
        let registry = try ProviderRegistry.parse(text: providerText() + "\n" + providerText(name: "b", secret: "\"B_KEY\"") + "\n"
            + providerText(name: "c", secret: "\"C_KEY\""), path: "p.toml")
        let values = ["DEMO_KEY": "sk-ok", "B_KEY": "sk-bad\r\nX: y"]
        XCTAssertThrowsError(try ProviderCredentials(registry: registry) { values[$0] }) { error in
            let errors = (error as? ConfigErrors)?.errors ?? []
            XCTAssertEqual(errors.map(\.description), [
                "p.toml:9: b.secret: B_KEY: the secret contains CR, LF, NUL or another control character",
                "p.toml:15: c.secret: C_KEY is not set (environment variable or credential file)",
            ])
            XCTAssertFalse("\(error)".contains("sk-"))
        }
        let good = try ProviderCredentials(registry: registry) { _ in "sk-ok" }
        XCTAssertEqual(good["demo"]?.header?.value, "Bearer sk-ok")
    }
}
