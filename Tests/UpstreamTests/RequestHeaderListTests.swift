import CCurl
import XCTest
@testable import Upstream

/// The CURLOPT_HTTPHEADER list built in one allocation must read, node by node, as the lines
/// `curl_slist_append` would have been given: the same strings, in order, the last node's `next`
/// NULL.
final class RequestHeaderListTests: XCTestCase {
    private func strings(of list: UnsafeMutablePointer<curl_slist>?) -> [String] {
        var lines: [String] = []
        var node = list
        while let current = node {
            lines.append(String(cString: current.pointee.data))
            node = current.pointee.next
        }
        return lines
    }

    func testTheListHoldsEveryLineInOrderWithTheSuppressingLinesLast() throws {
        let lines = try RequestHeaderLines.make(
            [("Host", "api.example"), ("Authorization", "Bearer k"), ("X-Empty", ""), ("Content-Length", "3")],
            hasContent: true)
        let list = try XCTUnwrap(lines.makeList())
        defer { RequestHeaderLines.freeList(list) }
        XCTAssertEqual(strings(of: list), [
            "Host: api.example", "Authorization: Bearer k", "X-Empty;", "Accept:", "Expect:", "Content-Type:",
        ])
        XCTAssertEqual(lines.count, 6)
    }

    func testARequestWithoutFieldsStillSuppressesLibcurlsDefaults() throws {
        let lines = try RequestHeaderLines.make([("Accept", "application/json")], hasContent: false)
        let list = try XCTUnwrap(lines.makeList())
        defer { RequestHeaderLines.freeList(list) }
        XCTAssertEqual(strings(of: list), ["Accept: application/json", "Expect:"])
    }
}
