import XCTest
@testable import ProviderRegistry

final class ProxyPathTests: XCTestCase {
    private func reason(_ rawPath: String) -> String? {
        do {
            _ = try ProxyPath.canonicalSegments(rawPath: rawPath)
            return nil
        } catch {
            return error.reason
        }
    }

    /// Every path form that could name another resource once decoded is refused before matching,
    /// each with its own reason slug.
    func testEveryAmbiguousPathFormIsRefusedWithItsReason() {
        XCTAssertEqual(reason("/v1/chat/completions/..%2F..%2Ffiles"), "encoded_slash")
        XCTAssertEqual(reason("/v1/%2e%2e/files"), "encoded_dot")
        XCTAssertEqual(reason("/v1/chat%2fcompletions"), "encoded_slash")
        XCTAssertEqual(reason("/v1/chat/completions%00"), "nul_byte")
        XCTAssertEqual(reason("/v1//chat/completions"), "empty_segment")
        XCTAssertEqual(reason("/v1/chat/completions/."), "dot_segment")
        XCTAssertEqual(reason("/v1/%252e%252e/files"), "encoded_percent")
        XCTAssertEqual(reason("/v1\\chat/completions"), "backslash")
    }

    func testOtherNonCanonicalPathsAreRefused() {
        XCTAssertEqual(reason("/v1/../files"), "dot_segment")
        XCTAssertEqual(reason("/v1/chat/completions//"), "empty_segment")
        XCTAssertEqual(reason("//"), "empty_segment")
        XCTAssertEqual(reason("//v1"), "empty_segment")
        XCTAssertEqual(reason(""), "missing_leading_slash")
        XCTAssertEqual(reason("v1/chat"), "missing_leading_slash")
        XCTAssertEqual(reason("/v1/a%5Cb"), "encoded_backslash")
        XCTAssertEqual(reason("/v1/a%5cb"), "encoded_backslash")
        XCTAssertEqual(reason("/v1/a%2Eb"), "encoded_dot")
        XCTAssertEqual(reason("/v1/a%0Ab"), "control_character")
        XCTAssertEqual(reason("/v1/a%7Fb"), "control_character")
        XCTAssertEqual(reason("/v1/a\tb"), "control_character")
        XCTAssertEqual(reason("/v1/a\u{0}b"), "nul_byte")
        XCTAssertEqual(reason("/v1/a%zzb"), "bad_percent_encoding")
        XCTAssertEqual(reason("/v1/a%4"), "bad_percent_encoding")
        XCTAssertEqual(reason("/v1/a%"), "bad_percent_encoding")
        XCTAssertEqual(reason("/v1/a b"), "invalid_character")
        XCTAssertEqual(reason("/v1/a?b"), "invalid_character")
        XCTAssertEqual(reason("/v1/a#b"), "invalid_character")
        XCTAssertEqual(reason("/v1/é"), "invalid_character")
        XCTAssertEqual(reason("/v1/%C3"), "invalid_utf8")
        XCTAssertEqual(reason("/v1/%FF%FE"), "invalid_utf8")
        XCTAssertEqual(reason(String(repeating: "/a", count: 65)), "too_long")
        XCTAssertEqual(reason("/" + String(repeating: "a", count: 5000)), "too_long")
    }

    func testDotSegmentsWithPathParametersAreRefusedLikeDotSegments() {
        // Tomcat-style servers drop `;params` from a segment before resolving dots: `..;x` is `..`.
        XCTAssertEqual(reason("/v1/..;x/files"), "dot_segment")
        XCTAssertEqual(reason("/v1/.;x/files"), "dot_segment")
        XCTAssertEqual(reason("/v1/..;/files"), "dot_segment")
        XCTAssertEqual(reason("/v1/files/..;jsessionid=1"), "dot_segment")
        XCTAssertEqual(reason("/v1/;x/files"), "empty_segment")
        // Parameters on an ordinary segment, and dots that are not a dot segment, still pass.
        XCTAssertNil(reason("/v1/files;v=2"))
        XCTAssertNil(reason("/v1/...;x"))
        XCTAssertNil(reason("/v1/.x;y"))
    }

    func testCanonicalPathsDecodeOnceAndReEncodeCanonically() throws {
        XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: "/v1/chat/completions"), ["v1", "chat", "completions"])
        XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: "/v1/%63hat"), ["v1", "chat"])
        XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: "/v1/caf%C3%A9/a%20b"), ["v1", "café", "a b"])
        XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: "/models/gemini-2.5-flash:generateContent"), ["models", "gemini-2.5-flash:generateContent"])
        XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: "/a/.../b"), ["a", "...", "b"])
        // One `/` ending the path is kept, as a last empty segment, and goes upstream as sent.
        XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: "/v1/items/"), ["v1", "items", ""])
        XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: "/"), [""])
        XCTAssertEqual(ProxyPath.encode(["v1", "items", ""]), "/v1/items/")
        XCTAssertEqual(ProxyPath.encode([""]), "/")
        XCTAssertEqual(ProxyPath.encode(["v1", "café", "a b", "x:y@z", "q%"]), "/v1/caf%C3%A9/a%20b/x:y@z/q%25")
        // Decoded once: an unreserved letter sent encoded arrives upstream plain.
        XCTAssertEqual(ProxyPath.encode(try ProxyPath.canonicalSegments(rawPath: "/v1/%63hat")), "/v1/chat")
    }

    func testSplitProxyRoute() throws {
        let split = try XCTUnwrap(ProxyPath.splitProxyRoute("/p/openai/v1/chat/completions"))
        XCTAssertEqual(split.provider, "openai")
        XCTAssertEqual(split.rest, "/v1/chat/completions")
        XCTAssertEqual(ProxyPath.splitProxyRoute("/p/openai")?.rest, "")
        XCTAssertNil(ProxyPath.splitProxyRoute("/p//v1"))
        XCTAssertNil(ProxyPath.splitProxyRoute("/v1/challenge"))
        XCTAssertNil(ProxyPath.splitProxyRoute("/px/openai"))
    }
}

final class PathPatternTests: XCTestCase {
    private func matches(_ pattern: String, _ path: String) throws -> Bool {
        try PathPattern.parse(pattern).matches(ProxyPath.canonicalSegments(rawPath: path))
    }

    func testLiteralPatternMatchesExactlyThatPath() throws {
        XCTAssertTrue(try matches("/v1/chat/completions", "/v1/chat/completions"))
        XCTAssertFalse(try matches("/v1/chat/completions", "/v1/chat/completions/x"))
        XCTAssertFalse(try matches("/v1/chat/completions", "/v1/chat"))
        XCTAssertFalse(try matches("/v1/chat/completions", "/V1/chat/completions"))
    }

    func testWildcardIsOneOrMoreWholeSegments() throws {
        XCTAssertTrue(try matches("/v1/models/*", "/v1/models/a"))
        XCTAssertTrue(try matches("/v1/models/*", "/v1/models/a/b/c"))
        XCTAssertFalse(try matches("/v1/models/*", "/v1/models"))
        XCTAssertTrue(try matches("/v1/files/*/content", "/v1/files/f1/content"))
        XCTAssertTrue(try matches("/v1/files/*/content", "/v1/files/a/b/content"))
        XCTAssertFalse(try matches("/v1/files/*/content", "/v1/files/content"))
        XCTAssertFalse(try matches("/v1/files/*/content", "/v1/files/a/content/x"))
        XCTAssertTrue(try matches("/*/x/*", "/a/x/b"))
        XCTAssertTrue(try matches("/*/x/*", "/a/x/x/x"))
        XCTAssertFalse(try matches("/*/x/*", "/x/b"))
        XCTAssertTrue(try matches("/*", "/anything/at/all"))
        XCTAssertTrue(try matches("/*/*", "/a/b"))
        XCTAssertFalse(try matches("/*/*", "/a"))
    }

    func testAPathEndingInSlashMatchesOnlyAPatternEndingInSlash() throws {
        XCTAssertTrue(try matches("/api/items/", "/api/items/"))
        XCTAssertFalse(try matches("/api/items/", "/api/items"))
        XCTAssertFalse(try matches("/api/items", "/api/items/"))
        // `*` never stands for the ending `/`: a pattern says whether it allows one.
        XCTAssertFalse(try matches("/api/*", "/api/items/"))
        XCTAssertFalse(try matches("/api/*", "/api/"))
        XCTAssertTrue(try matches("/api/*/", "/api/items/"))
        XCTAssertTrue(try matches("/api/*/", "/api/items/7/"))
        XCTAssertFalse(try matches("/api/*/", "/api/"))
        XCTAssertFalse(try matches("/api/*/", "/api/items"))
        XCTAssertTrue(try matches("/", "/"))
        XCTAssertFalse(try matches("/*", "/"))
        XCTAssertThrowsError(try PathPattern.parse("/api//"))
        XCTAssertThrowsError(try PathPattern.parse("/api//items"))
        XCTAssertThrowsError(try PathPattern.parse("//"))
        // Neither pattern hides the other from check-config: they match no path in common.
        XCTAssertFalse(try PathPattern.parse("/api/*").covers(PathPattern.parse("/api/items/")))
        XCTAssertTrue(try PathPattern.parse("/api/*/").covers(PathPattern.parse("/api/items/")))
    }

    func testWildcardDoesNotMatchInsideASegment() throws {
        XCTAssertFalse(try matches("/v1/*/content", "/v1/content"))
        XCTAssertThrowsError(try PathPattern.parse("/v1/mod*"))
        XCTAssertThrowsError(try PathPattern.parse("/*/*/*/*/*"))
    }

    func testDecodedSegmentsMatchLiterally() throws {
        XCTAssertTrue(try matches("/v1/café", "/v1/caf%C3%A9"))
        XCTAssertTrue(try matches("/v1/a:b", "/v1/a%3Ab"))
    }
}
