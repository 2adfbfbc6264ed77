import XCTest
@testable import Upstream

/// A URL is parsed once and handed to every transfer to it (CURLOPT_CURLU); what reaches the
/// upstream must be the same bytes as when libcurl parsed the text itself, the second time (from
/// the cache) as the first.
final class ParsedURLCacheTests: XCTestCase {
    func testTheSameTextGivesTheSameParsedURLAndAnotherTextItsOwn() throws {
        let cache = ParsedURLCache(capacity: 4)
        let first = try XCTUnwrap(cache.parsed("https://api.example/v1/models"))
        XCTAssertTrue(first === cache.parsed("https://api.example/v1/models"))
        let other = try XCTUnwrap(cache.parsed("https://api.example/v1/models?page=2"))
        XCTAssertFalse(first === other)
        XCTAssertEqual(other.text, "https://api.example/v1/models?page=2")
    }

    func testANewURLTakesTheOldestSlotOnceAllAreTaken() throws {
        let cache = ParsedURLCache(capacity: 2)
        let a = try XCTUnwrap(cache.parsed("http://h/a"))
        let b = try XCTUnwrap(cache.parsed("http://h/b"))
        _ = try XCTUnwrap(cache.parsed("http://h/c"))  // replaces a
        XCTAssertTrue(b === cache.parsed("http://h/b"))
        XCTAssertFalse(a === cache.parsed("http://h/a"))  // parsed again, now in b's slot
        XCTAssertFalse(b === cache.parsed("http://h/b"))
    }

    func testAURLLibcurlRefusesIsNotCached() {
        let cache = ParsedURLCache()
        XCTAssertNil(cache.parsed("http://[::1/"))
    }

    func testDotSegmentsAndPercentCaseReachTheUpstreamAsGivenEveryTime() throws {
        let server = try TestUpstreamServer { _, connection in connection.respond(status: 200, body: Array("ok".utf8)) }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }
        let target = "/v1/a/../b/./c%2F%2fd?x=%2F&y=a%20b#frag"
        for _ in 0..<3 {
            let handler = RecordingHandler()
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)\(target)"), handler: handler)
            XCTAssertTrue(handler.waitForCompletion())
            XCTAssertEqual(handler.snapshot.status, 200)
        }
        // libcurl never sends the fragment (RFC 9110 §7.1: it is not part of the target).
        XCTAssertEqual(server.requests.map(\.target), Array(repeating: "/v1/a/../b/./c%2F%2fd?x=%2F&y=a%20b", count: 3))
    }
}
